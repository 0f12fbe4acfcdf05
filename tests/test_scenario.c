/* SPDX-License-Identifier: MIT */
/* Scenario loading: references, --set overrides (located in the argument), cross-field
 * checks, and the guideline's invariants on the library's default scenario. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "check-main.h"
#include "core/error.h"
#include "scenario/guideline.h"

static ParoScenario *load(const char *const *sets, GError **error)
{
    g_autofree char *path = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    return paro_scenario_load(path, sets, error);
}

START_TEST(scenario_default_loads)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(NULL, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert_int_eq(paro_scenario_dp_ranks(s), 32);
    ck_assert_int_eq(s->group, 8);
    ck_assert_int_eq(s->training.accumulation, 10);
    ck_assert_str_eq(s->model->name, "llama-7b");
    /* B = 100 Gb/s shared by 8 GPUs. */
    ck_assert_double_eq(paro_topology_inter_Bps(s->topology), 12.5e9 / 8);
}
END_TEST

START_TEST(scenario_set_overrides)
{
    const char *sets[] = {"training.accumulation=4", "topology.nodes=16",
                          "training.trainable.fraction=1/16", "collectives.algorithm=ho-ring",
                          NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(sets, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert_int_eq(s->training.accumulation, 4);
    ck_assert_int_eq(paro_scenario_dp_ranks(s), 128);
    ck_assert_double_eq(s->training.trainable.fraction, 0.0625);
    ck_assert_int_eq(s->algorithm, PARO_ALGO_HO_RING);
}
END_TEST

START_TEST(scenario_framework_profiles_set_defaults)
{
    /* Profiles give training.bucket and training.prefetch their frameworks' defaults
     * (docs/frameworks.md): DeepSpeed's reduce_bucket_size 5e8 elements x 2 bytes (bf16) and
     * stage3_prefetch_bucket_size 5e7 elements, less than one LLaMA-7B layer (202M
     * parameters): the next layer; FSDP: a bucket per unit (0) and one unit ahead. What the
     * scenario writes wins. */
    const struct {
        const char *sets[3];
        ParoFrameworkKind kind;
        double bucket;
        gint64 prefetch;
    } cases[] = {
        {{NULL}, PARO_FRAMEWORK_IDEAL, 25.0 * 1048576.0, 1},
        {{"framework=deepspeed", NULL}, PARO_FRAMEWORK_DEEPSPEED, 1e9, 1},
        {{"framework=fsdp", NULL}, PARO_FRAMEWORK_FSDP, 0, 1},
        {{"framework=megatron", NULL}, PARO_FRAMEWORK_MEGATRON, 25.0 * 1048576.0, 1},
        {{"framework=deepspeed", "training.bucket=50 MB", NULL}, PARO_FRAMEWORK_DEEPSPEED, 50e6, 1},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(ParoScenario) s = load(cases[i].sets, &error);
        ck_assert_msg(s != NULL, "%s", error ? error->message : "");
        ck_assert_int_eq(s->framework.kind, cases[i].kind);
        ck_assert_double_eq_tol(s->training.bucket_bytes, cases[i].bucket, 1e-6);
        ck_assert_int_eq(s->training.prefetch, cases[i].prefetch);
    }
    /* The default scenario writes its framework as a mapping (name: ideal, fused_softmax:
     * false): `framework=NAME` sets the name and keeps the rest, and one key can be set
     * alone. */
    const char *renamed[] = {"framework=megatron", NULL};
    g_autoptr(ParoScenario) kept = load(renamed, NULL);
    ck_assert_int_eq(kept->framework.kind, PARO_FRAMEWORK_MEGATRON);
    ck_assert_int_eq(kept->framework.fused_softmax, PARO_SETTING_FALSE);
    ck_assert(!paro_framework_fused_softmax(&kept->framework));
    const char *keyed[] = {"framework.fused_softmax=true", NULL};
    g_autoptr(ParoScenario) fused = load(keyed, NULL);
    ck_assert_int_eq(fused->framework.kind, PARO_FRAMEWORK_IDEAL);
    ck_assert(paro_framework_fused_softmax(&fused->framework));
    /* DeepSpeed prefetches whole layers of the next 5e7 elements: 7 layers of 7e6 */
    ParoFramework ds = {PARO_FRAMEWORK_DEEPSPEED, PARO_SETTING_DEFAULT, PARO_SETTING_DEFAULT, 0};
    ck_assert_int_eq(paro_framework_prefetch(&ds, 7e6, 1), 7);
    /* stages 1-2 reduce on the compute stream with a bucket all-reduce; stage 3 does not */
    ck_assert(paro_framework_reduce_on_compute(&ds, FALSE));
    ck_assert(!paro_framework_reduce_on_compute(&ds, TRUE));
    ck_assert(paro_framework_bucket_allreduce(&ds, FALSE));
    ds.bucket_allreduce = PARO_SETTING_FALSE; /* framework.bucket_allreduce: false */
    ck_assert(!paro_framework_bucket_allreduce(&ds, FALSE));
    /* before DeepSpeed 0.12.4 (use_multi_rank_bucket_allreduce) a bucket went to its owners */
    const char *old_ds[] = {"framework.name=deepspeed", "framework.version=0.10.0", NULL};
    const char *new_ds[] = {"framework.name=deepspeed", "framework.version=0.12.4", NULL};
    g_autoptr(ParoScenario) before = load(old_ds, NULL);
    g_autoptr(ParoScenario) since = load(new_ds, NULL);
    ck_assert_int_eq(before->framework.version, 10000);
    ck_assert(!paro_framework_bucket_allreduce(&before->framework, FALSE));
    /* DeepSpeed's BF16_Optimizer: bf16 in the pipeline engine at stage 0 (all-reduces in
     * every version) */
    ck_assert(paro_framework_bf16_optimizer(&before->framework, TRUE, TRUE));
    ck_assert(!paro_framework_bf16_optimizer(&before->framework, TRUE, FALSE));
    ck_assert(!paro_framework_bf16_optimizer(&before->framework, FALSE, TRUE));
    ck_assert(paro_framework_bucket_allreduce(&since->framework, FALSE));
    /* Gradient passes a trainable parameter and micro-batch (decision 42), by hand: FSDP's
     * flat-gradient copy (2 b_g), cast (b_g + b_r) and pre-division (2 b_r): bf16 reduced
     * in fp32 4 + 6 + 8 = 18, in bf16 4 + 0 + 4 = 8; DeepSpeed's BF16_Optimizer 2 + 4 + 12 =
     * 18, nothing without it; `grad_passes: false` turns a profile's off; Megatron and ideal
     * have none. */
    ParoFramework fsdp = {PARO_FRAMEWORK_FSDP};
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&fsdp, 2, 4, FALSE), 18);
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&fsdp, 2, 2, FALSE), 8);
    ds.grad_passes = PARO_SETTING_DEFAULT;
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&ds, 2, 2, TRUE), 18);
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&ds, 2, 2, FALSE), 0);
    fsdp.grad_passes = PARO_SETTING_FALSE;
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&fsdp, 2, 4, FALSE), 0);
    /* FSDP2 (decision 62, _fsdp_collectives.py): the gradients concatenated into the
     * reduce-scatter's input in its type, one copy that casts (b_g + b_r), then pre-divided
     * (2 b_r): 2 + 4 + 8 = 14 in fp32, 2 + 2 + 4 = 8 in bf16; and each all-gather's output
     * copied into the parameters, read and written: 2 bytes a gathered byte. FSDP1 copies
     * nothing out; the key is FSDP's alone. */
    ParoFramework fsdp2 = {PARO_FRAMEWORK_FSDP};
    fsdp2.fsdp2 = PARO_SETTING_TRUE;
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&fsdp2, 2, 4, FALSE), 14);
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&fsdp2, 2, 2, FALSE), 8);
    ck_assert_double_eq(paro_framework_gather_copy_bytes(&fsdp2), 2);
    ck_assert_double_eq(paro_framework_gather_copy_bytes(&fsdp), 0);
    ParoFramework ds_fsdp2 = {PARO_FRAMEWORK_DEEPSPEED};
    ds_fsdp2.fsdp2 = PARO_SETTING_TRUE;
    ck_assert(!paro_framework_fsdp2(&ds_fsdp2));
    ck_assert_double_eq(paro_framework_gather_copy_bytes(&ds_fsdp2), 0);
    ParoFramework megatron = {PARO_FRAMEWORK_MEGATRON}, ideal = {PARO_FRAMEWORK_IDEAL};
    megatron.grad_passes = PARO_SETTING_TRUE;
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&megatron, 2, 4, TRUE), 0);
    ck_assert_double_eq(paro_framework_grad_pass_bytes(&ideal, 2, 4, TRUE), 0);
    /* a mapping with its keys, and an unknown name located in the argument */
    const char *mapping[] = {"framework.name=fsdp", "framework.reduce_precision=fp32", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(mapping, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert_int_eq(s->framework.kind, PARO_FRAMEWORK_FSDP);
    ck_assert_int_eq(s->framework.reduce_precision, 1 + PARO_PRECISION_FP32);
    /* A model or topology written inline has a name too, but is a document (it has a
     * `kind`): a path replaces it, it is not renamed (a regression of the shorthand
     * above, which had set the inline topology's name to the path). */
    g_autofree char *inline_path = paro_test_path("tests/data/good/scenario-inline.yaml");
    g_autofree char *h100 = paro_test_path("topologies/dgx-h100x8.yaml");
    g_autofree char *swap = g_strdup_printf("topology=%s", h100);
    const char *swapped[] = {swap, NULL};
    g_autoptr(ParoScenario) other = paro_scenario_load(inline_path, swapped, &error);
    ck_assert_msg(other != NULL, "%s", error ? error->message : "");
    ck_assert_str_eq(other->topology->name, "dgx-h100x8");
    ck_assert_int_eq(other->topology->nodes, 4);
    const char *bad[] = {"framework=horovod", NULL};
    g_autoptr(ParoScenario) t = load(bad, &error);
    ck_assert(t == NULL);
    ck_assert_msg(strstr(error->message, "--set[1]") && strstr(error->message, "horovod"), "%s",
                  error->message);
}
END_TEST

START_TEST(scenario_set_key_of_named_framework)
{
    /* `framework: NAME` is `framework: {name: NAME}`: a key can be set inside it, and the
     * name is kept (before, --set framework.KEY on a named profile was refused). */
    const char *sets[] = {"framework=megatron", "framework.tp_overlap=true", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(sets, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert_int_eq(s->framework.kind, PARO_FRAMEWORK_MEGATRON);
    ck_assert(paro_framework_tp_overlap(&s->framework));
    ck_assert(paro_framework_blocking_p2p(&s->framework)); /* the profile's own default */
    /* every profile's RMSNorm is one kernel unless the run says otherwise (decision 60) */
    ck_assert(paro_framework_fused_norm(&s->framework));
    const char *eager[] = {"framework=fsdp", "framework.fused_norm=false", NULL};
    g_autoptr(ParoScenario) e = load(eager, &error);
    ck_assert_msg(e != NULL, "%s", error ? error->message : "");
    ck_assert(!paro_framework_fused_norm(&e->framework));
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(e);
    ck_assert(d->compute.eager_norm);
    /* FSDP1 unless the run says FSDP2 (decision 62) */
    ck_assert(!paro_framework_fsdp2(&e->framework));
    const char *two[] = {"framework=fsdp", "framework.fsdp2=true", NULL};
    g_autoptr(ParoScenario) f2 = load(two, &error);
    ck_assert_msg(f2 != NULL, "%s", error ? error->message : "");
    ck_assert(paro_framework_fsdp2(&f2->framework));
}
END_TEST

/* The scenario under `framework: @name`, with `framework.@key: @value` unless @value is
 * NULL; the test fails if it does not load. */
static ParoScenario *load_framework(const char *name, const char *key, const char *value)
{
    g_autofree char *fw = g_strdup_printf("framework=%s", name);
    g_autofree char *kv = value ? g_strdup_printf("framework.%s=%s", key, value) : NULL;
    const char *sets[] = {fw, kv, NULL};
    g_autoptr(GError) error = NULL;
    ParoScenario *s = load(sets, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    return s;
}

START_TEST(scenario_megatron_version_decides_async_dgrad)
{
    /* Megatron-LM issues the backward's input-gradient collective asynchronously since
     * commit 16c90445 (2021-09-02), after its v2.6 tag; Megatron-Core's 0.x versions do
     * too; DeepSpeed's profile (Megatron-DeepSpeed's forks) does not (decision 58). */
    struct {
        const char *framework, *version;
        gboolean async;
    } cases[] = {{"megatron", NULL, TRUE},   {"megatron", "2.5", FALSE},
                 {"megatron", "1.0", FALSE}, {"megatron", "2.6.9", FALSE},
                 {"megatron", "2.7", TRUE},  {"megatron", "0.20", TRUE},
                 {"deepspeed", NULL, FALSE}, {"ideal", NULL, FALSE}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(ParoScenario) s = load_framework(cases[i].framework, "version", cases[i].version);
        ck_assert_msg(paro_framework_tp_async_dgrad(&s->framework) == cases[i].async, "%s %s",
                      cases[i].framework, cases[i].version ? cases[i].version : "-");
    }
}
END_TEST

START_TEST(scenario_framework_decides_rotary_kernels)
{
    /* A rotary embedding runs as Transformer Engine's fused kernel under Megatron-LM
     * (--no-rope-fusion is off by default) and in the ideal profile, as HuggingFace's
     * operators under DeepSpeed and FSDP (their LLaMA runs' model code), and as the run's
     * code says when it says so: torchtitan's complex product (decision 61). */
    struct {
        const char *framework, *rope;
        ParoRope want;
    } cases[] = {{"megatron", NULL, PARO_ROPE_FUSED},
                 {"ideal", NULL, PARO_ROPE_FUSED},
                 {"deepspeed", NULL, PARO_ROPE_ROTATE_HALF},
                 {"fsdp", NULL, PARO_ROPE_ROTATE_HALF},
                 {"fsdp", "complex", PARO_ROPE_COMPLEX},
                 {"megatron", "rotate_half", PARO_ROPE_ROTATE_HALF},
                 {"deepspeed", "fused", PARO_ROPE_FUSED}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(ParoScenario) s = load_framework(cases[i].framework, "rope", cases[i].rope);
        g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
        ck_assert_msg(d->compute.rope == cases[i].want, "%s %s", cases[i].framework,
                      cases[i].rope ? cases[i].rope : "-");
    }
}
END_TEST

START_TEST(scenario_set_swaps_model_file)
{
    /* A path given on the command line is relative to the current directory, like any
     * command-line path; the swap happens before the other overrides reach into it. */
    g_autofree char *model = paro_test_path("models/llama-65b.yaml");
    g_autofree char *swap = g_strdup_printf("model=%s", model);
    const char *sets[] = {"model.architecture.layers=40", swap, NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(sets, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert_str_eq(s->model->name, "llama-65b");
    ck_assert_int_eq(s->model->layers, 40);
}
END_TEST

START_TEST(scenario_bare_name_ignores_current_directory)
{
    /* Issue #42: a bare `model: llama-7b` is looked up beside the scenario, then among the
     * shipped models, never in the current directory, where a checkpoint folder of that
     * name (or a stray llama-7b.yaml) hid the shipped model wherever parosim ran. */
    g_autofree char *here = g_get_current_dir();
    g_autofree char *scenarios = g_dir_make_tmp("paro-bare-XXXXXX", NULL);
    g_autofree char *elsewhere = g_dir_make_tmp("paro-cwd-XXXXXX", NULL);
    ck_assert(scenarios != NULL && elsewhere != NULL);
    g_autofree char *path = g_build_filename(scenarios, "bare.yaml", NULL);
    /* the default scenario with bare names for its references */
    g_autofree char *original = paro_test_path("scenarios/llama-7b_a100x8-100g_n32.yaml");
    g_autofree char *yaml = NULL;
    ck_assert(g_file_get_contents(original, &yaml, NULL, NULL));
    g_autoptr(GString) bare = g_string_new(yaml);
    ck_assert_uint_eq(g_string_replace(bare, "../models/llama-7b.yaml", "llama-7b", 1), 1);
    ck_assert_uint_eq(g_string_replace(bare, "../topologies/a100x8-100g.yaml", "a100x8-100g", 1),
                      1);
    ck_assert(g_file_set_contents(path, bare->str, (gssize)bare->len, NULL));
    g_autofree char *folder = g_build_filename(elsewhere, "llama-7b", NULL);
    g_autofree char *stray = g_build_filename(elsewhere, "a100x8-100g", NULL);
    ck_assert_int_eq(g_mkdir(folder, 0755), 0);
    ck_assert(g_file_set_contents(stray, "kind: topology\nnot: a topology\n", -1, NULL));
    ck_assert_int_eq(g_chdir(elsewhere), 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = paro_scenario_load(path, NULL, &error);
    ck_assert_int_eq(g_chdir(here), 0);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert_str_eq(s->model->name, "llama-7b");
    ck_assert(g_str_has_suffix(s->model->source_path, "models/llama-7b.yaml"));
    ck_assert(g_str_has_suffix(s->topology->source_path, "topologies/a100x8-100g.yaml"));
    /* a file beside the scenario still comes first */
    g_autofree char *beside = g_build_filename(scenarios, "llama-7b", NULL);
    g_autofree char *shipped = paro_test_path("models/llama-65b.yaml");
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(shipped, &text, NULL, NULL));
    ck_assert(g_file_set_contents(beside, text, -1, NULL));
    g_autoptr(ParoScenario) b = paro_scenario_load(path, NULL, &error);
    ck_assert_msg(b != NULL, "%s", error ? error->message : "");
    ck_assert_str_eq(b->model->name, "llama-65b");
    g_unlink(beside);
    g_unlink(stray);
    g_rmdir(folder);
    g_unlink(path);
    g_rmdir(scenarios);
    g_rmdir(elsewhere);
}
END_TEST

/* The guideline's figures for @strategy in the default scenario on DGX H100 nodes, fp8 off
 * (0), on (1), or on with the weights held in fp8 (2). */
static ParoStrategyResult h100_result(int fp8, const char *strategy)
{
    g_autofree char *topology = paro_test_path("topologies/dgx-h100x8.yaml");
    g_autofree char *swap = g_strdup_printf("topology=%s", topology);
    const char *sets[] = {swap, fp8 ? "training.fp8=true" : "training.fp8=false",
                          fp8 == 2 ? "training.fp8_params=true" : NULL, NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(sets, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(d);
    return *paro_guideline_find(g, paro_strategy_lookup(strategy));
}

START_TEST(scenario_fp8_weight_copies)
{
    /* System: the default scenario (LLaMA-7B on 32 GPUs) on DGX H100 nodes, fp8 off and on.
     * Expectation, derived by hand: Transformer Engine keeps each linear weight's fp8 copy
     * and its transpose, 2 bytes a weight, across the micro-batches. DDP (NNN), which holds
     * whole parameters, adds them for all 32 layers of 202,383,360 weights (4 h^2 + 3 h f +
     * 2 h, h = 4096, f = 11008; the norms' few are counted too): 12,952,535,040 bytes of
     * workspace. ZeRO-3 (GGG) casts each gathered layer instead: its two gathered layers
     * take 2 + 2 bytes a weight, 809,533,440 bytes more, and no resident copies. Model
     * states do not change. Activations: each layer keeps its four products' inputs for
     * the weight gradients as fp8, a byte less an element: the QKV, attention-output and
     * MLP inputs (h each) and the MLP's inner input (f), (3 x 4096 + 11008) bytes a token,
     * x 4 x 512 tokens x 32 layers = 1,526,726,656 bytes less (no recomputation). */
    ParoStrategyResult ddp16 = h100_result(0, "ddp"), ddp8 = h100_result(1, "ddp");
    ParoStrategyResult z3_16 = h100_result(0, "zero-3"), z3_8 = h100_result(1, "zero-3");
    ck_assert_double_eq_tol(ddp8.mem_workspace - ddp16.mem_workspace, 12952535040.0, 1);
    ck_assert_double_eq(ddp8.mem_buffers, ddp16.mem_buffers);
    ck_assert_double_eq(z3_8.mem_workspace, z3_16.mem_workspace);
    ck_assert_double_eq_tol(z3_8.mem_buffers - z3_16.mem_buffers, 809533440.0, 1);
    ck_assert_double_eq(z3_8.mem_model_states, z3_16.mem_model_states);
    ck_assert_double_eq_tol(z3_16.mem_activations - z3_8.mem_activations, 1526726656.0, 1);
}
END_TEST

START_TEST(scenario_fp8_params_are_the_copies)
{
    /* System: as scenario_fp8_weight_copies, with training.fp8_params (Transformer Engine's
     * fp8_model_init). Expectation, derived by hand: the fp8 weight (1 byte) and its
     * transpose (1 byte) are the weights, 2 bytes a weight where the 16-bit weight stood, so
     * DDP holds no resident copy: the 12,952,535,040 bytes of copies go, its workspace is
     * fp8-off's; ZeRO-3's two gathered layers take 2 bytes a weight, not 2 + 2: the 809,533,440
     * bytes more go too. Model states (their 2 bytes a weight) and the fp8-saved activations
     * stay as with fp8 alone. */
    ParoStrategyResult ddp16 = h100_result(0, "ddp"), ddp8 = h100_result(1, "ddp"),
                       ddp_p = h100_result(2, "ddp");
    ParoStrategyResult z3_16 = h100_result(0, "zero-3"), z3_8 = h100_result(1, "zero-3"),
                       z3_p = h100_result(2, "zero-3");
    ck_assert_double_eq_tol(ddp8.mem_workspace - ddp_p.mem_workspace, 12952535040.0, 1);
    ck_assert_double_eq(ddp_p.mem_workspace, ddp16.mem_workspace);
    ck_assert_double_eq_tol(z3_8.mem_buffers - z3_p.mem_buffers, 809533440.0, 1);
    ck_assert_double_eq(z3_p.mem_buffers, z3_16.mem_buffers);
    ck_assert_double_eq(ddp_p.mem_model_states, ddp8.mem_model_states);
    ck_assert_double_eq(ddp_p.mem_activations, ddp8.mem_activations);
}
END_TEST

typedef struct {
    const char *set;
    int code;
    int column; /* in the --set argument */
} BadSet;

static const BadSet bad_sets[] = {
    {"training.accumulaton=8", PARO_CONFIG_ERROR_UNKNOWN_KEY, 10},
    {"training.accumulation=eight", PARO_CONFIG_ERROR_TYPE, 23},
    {"training.accumulation=0", PARO_CONFIG_ERROR_RANGE, 23},
    {"training", PARO_CONFIG_ERROR_SYNTAX, 9},
    {"training..x=1", PARO_CONFIG_ERROR_SYNTAX, 10},
    {"training=1", PARO_CONFIG_ERROR_TYPE, 1},
    {"topology.gpu.memory=80", PARO_CONFIG_ERROR_UNIT, 21},
    {"bogus.key=1", PARO_CONFIG_ERROR_UNKNOWN_KEY, 1},
    {"training.accumulation.x=1", PARO_CONFIG_ERROR_TYPE, 23},
    {"training.accumulation=", PARO_CONFIG_ERROR_SYNTAX, 23},
    /* issue #16: every count and time within its limit (core/limits.h), located */
    {"training.prefetch=2147483647", PARO_CONFIG_ERROR_RANGE, 19},
    {"training.accumulation=2147483648", PARO_CONFIG_ERROR_RANGE, 23},
    {"model.architecture.layers=1099511627776", PARO_CONFIG_ERROR_RANGE, 27},
    {"topology.node.nics.count=16384", PARO_CONFIG_ERROR_RANGE, 26},
    {"topology.node.gpus=2147483648", PARO_CONFIG_ERROR_RANGE, 20},
    {"topology.node.nics.latency=3000 h", PARO_CONFIG_ERROR_RANGE, 28},
    {"topology.nccl.step_overhead=100 h", PARO_CONFIG_ERROR_RANGE, 29},
    {"training.memory_overhead=1e300 B", PARO_CONFIG_ERROR_RANGE, 26},
    /* decision 84: a share within [0, 0.5], a size within the GPU's memory */
    {"training.memory_headroom=0.6", PARO_CONFIG_ERROR_RANGE, 26},
    {"training.memory_headroom=-0.01", PARO_CONFIG_ERROR_RANGE, 26},
    {"training.memory_headroom=-1 GiB", PARO_CONFIG_ERROR_RANGE, 26},
    {"training.memory_headroom=80 GiB", PARO_CONFIG_ERROR_RANGE, 26},
    {"training.memory_headroom=4 GB/s", PARO_CONFIG_ERROR_UNIT, 26},
    {"model.parameters=1e-300", PARO_CONFIG_ERROR_RANGE, 18},
    {"parallelism.tp=7", PARO_CONFIG_ERROR_CONSTRAINT, 16},
    {"schema=2", PARO_CONFIG_ERROR_RANGE, 8}, /* the header is checked after --set too */
    {"kind=banana", PARO_CONFIG_ERROR_TYPE, 6},
    {"topology.node.nics.bandwidth=1e-300 b/s", PARO_CONFIG_ERROR_RANGE, 30},
    {"topology.node.nics.bandwidth=1 B/s", PARO_CONFIG_ERROR_RANGE, 30}, /* the clock */
};

START_TEST(scenario_set_errors_are_located)
{
    const BadSet *b = &bad_sets[_i];
    const char *sets[] = {"training.micro_batch=2", b->set, NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(sets, &error);
    ck_assert_msg(s == NULL, "'%s' accepted", b->set);
    ck_assert_msg(g_error_matches(error, PARO_CONFIG_ERROR, b->code), "'%s': %s", b->set,
                  error->message);
    const ParoConfigErrorPrivate *loc = paro_config_error_get_location(error);
    ck_assert_str_eq(loc->file, "--set[2]");
    ck_assert_int_eq(loc->line, 1);
    ck_assert_msg(loc->column == b->column, "'%s': column %d, want %d (%s)", b->set, loc->column,
                  b->column, error->message);
}
END_TEST

START_TEST(scenario_memory_headroom_rule)
{
    /* System: the default scenario's A100-SXM4-80GB, M = 80 GiB = 85,899,345,920 bytes.
     * Expectations (by hand, decision 84): the default headroom is 5% of M = 4 GiB, so a
     * peak over M - 4 GiB = 76 GiB that still fits is tight: 77 GiB tight, 75 GiB not,
     * 81 GiB out of memory and so not tight, M itself tight. Written as a size, 4 GiB
     * draws the same line exactly: 76 GiB leaves the whole margin (not tight), a byte more
     * is tight. 0.25 is 20 GiB; 0 makes nothing tight.
     * Tolerance: 0.05 x M in doubles is within a byte of 4 GiB (0.05 is not exact). */
    const double gib = 1073741824.0;
    g_autoptr(ParoScenario) s = load(NULL, NULL);
    ck_assert_double_eq(s->topology->gpu.memory_bytes, 80 * gib);
    ck_assert_double_eq_tol(paro_scenario_memory_headroom_bytes(s), 4 * gib, 1);
    ck_assert(paro_scenario_is_tight(s, 77 * gib));
    ck_assert(!paro_scenario_is_tight(s, 75 * gib));
    ck_assert(!paro_scenario_is_tight(s, 81 * gib));
    ck_assert(paro_scenario_is_tight(s, 80 * gib));

    const char *bytes[] = {"training.memory_headroom=4 GiB", NULL};
    g_autoptr(ParoScenario) b = load(bytes, NULL);
    ck_assert_double_eq(paro_scenario_memory_headroom_bytes(b), 4 * gib);
    ck_assert(!paro_scenario_is_tight(b, 76 * gib));
    ck_assert(paro_scenario_is_tight(b, 76 * gib + 1));

    const char *quarter[] = {"training.memory_headroom=0.25", NULL};
    g_autoptr(ParoScenario) q = load(quarter, NULL);
    ck_assert_double_eq_tol(paro_scenario_memory_headroom_bytes(q), 20 * gib, 1);
    ck_assert(paro_scenario_is_tight(q, 61 * gib));
    ck_assert(!paro_scenario_is_tight(q, 59 * gib));

    const char *none[] = {"training.memory_headroom=0", NULL};
    g_autoptr(ParoScenario) z = load(none, NULL);
    ck_assert_double_eq(paro_scenario_memory_headroom_bytes(z), 0);
    ck_assert(!paro_scenario_is_tight(z, 80 * gib));
}
END_TEST

/* The guideline's row of @name. */
static const ParoStrategyResult *row_of(const ParoGuideline *g, const char *name)
{
    return paro_guideline_find(g, paro_strategy_lookup(name));
}

START_TEST(scenario_guideline_tight_rows)
{
    /* System: the default scenario, zero-3's closed-form total moved to 77, 75 and 81 GiB by
     * memory_overhead (a term of the total), on 80 GiB with the default 5% headroom.
     * Expectations (by hand, decision 84): the line is at 76 GiB: 77 fits but is tight, 75
     * fits with margin, 81 is out of memory and not tight. Then with NNG (zero-1, of the
     * fastest) moved to 77 GiB the same way, so tight, every row that fits with margin
     * ranks before every tight one, and those before the rest; with memory_headroom: 0 no
     * row is tight and NNG takes its rank of the unsqueezed scenario again. */
    const double gib = 1073741824.0;
    g_autoptr(ParoScenario) s = load(NULL, NULL);
    g_autoptr(ParoScenarioDerived) d = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(d);
    const ParoStrategyResult *base = row_of(g, "zero-3");
    double without = base->mem_total - base->mem_overhead;
    const struct {
        double total_gib;
        gboolean fits, tight;
    } cases[] = {{77, TRUE, TRUE}, {75, TRUE, FALSE}, {81, FALSE, FALSE}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        char value[G_ASCII_DTOSTR_BUF_SIZE];
        g_autofree char *set = g_strdup_printf(
            "training.memory_overhead=%s B",
            g_ascii_dtostr(value, sizeof value, cases[i].total_gib * gib - without));
        const char *sets[] = {set, NULL};
        g_autoptr(ParoScenario) t = load(sets, NULL);
        g_autoptr(ParoScenarioDerived) td = paro_scenario_derive(t);
        g_autoptr(ParoGuideline) tg = paro_guideline_evaluate(td);
        const ParoStrategyResult *r = row_of(tg, "zero-3");
        ck_assert_double_eq_tol(r->mem_total, cases[i].total_gib * gib, 1);
        ck_assert_msg(r->fits == cases[i].fits && r->tight == cases[i].tight,
                      "%g GiB: fits %d tight %d", cases[i].total_gib, r->fits, r->tight);
    }

    /* NNG (zero-1), among the fastest in the closed form, moved to 77 GiB: tight */
    const ParoStrategyResult *nng = row_of(g, "NNG");
    char value[G_ASCII_DTOSTR_BUF_SIZE];
    g_autofree char *squeeze = g_strdup_printf(
        "training.memory_overhead=%s B",
        g_ascii_dtostr(value, sizeof value, 77 * gib - (nng->mem_total - nng->mem_overhead)));
    const char *squeezed[] = {squeeze, NULL};
    g_autoptr(ParoScenario) t = load(squeezed, NULL);
    g_autoptr(ParoScenarioDerived) td = paro_scenario_derive(t);
    g_autoptr(ParoGuideline) tg = paro_guideline_evaluate(td);
    ck_assert(row_of(tg, "NNG")->tight);
    int last = 0, tight = 0;
    for (guint i = 0; i < tg->results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(tg->results, ParoStrategyResult, i);
        int class = !r->fits ? 2 : r->tight ? 1 : 0;
        ck_assert_msg(class >= last, "%s (class %d) ranks after class %d", r->strategy->name, class,
                      last);
        last = class;
        tight += r->tight;
    }
    ck_assert_int_gt(tight, 0);
    ck_assert_int_gt(row_of(tg, "NNG")->rank, nng->rank);

    const char *no_margin[] = {squeeze, "training.memory_headroom=0", NULL};
    g_autoptr(ParoScenario) n = load(no_margin, NULL);
    g_autoptr(ParoScenarioDerived) nd = paro_scenario_derive(n);
    g_autoptr(ParoGuideline) ng = paro_guideline_evaluate(nd);
    for (guint i = 0; i < ng->results->len; i++)
        ck_assert(!g_array_index(ng->results, ParoStrategyResult, i).tight);
    /* the rows ranked before it need less memory, so they still fit: its rank as before */
    ck_assert_int_eq(row_of(ng, "NNG")->rank, nng->rank);
}
END_TEST

START_TEST(scenario_guideline_invariants)
{
    /* For every strategy: model states = params + grads + optimizer; serial bound =
     * compute + comm; step = max; ranks 1..29 with all fitting strategies first;
     * comm = t_param + t_gradient + t_syncg + t_syncp. */
    g_autoptr(ParoScenario) s = load(NULL, NULL);
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    ck_assert_int_eq(g->results->len, 29);
    gboolean seen_oom = FALSE;
    for (guint i = 0; i < g->results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(g->results, ParoStrategyResult, i);
        ck_assert_int_eq(r->rank, (int)i + 1);
        ck_assert_double_eq_tol(r->mem_model_states,
                                r->mem_params + r->mem_grads + r->mem_optimizer, 1);
        ck_assert_double_eq(r->t_step, fmax(r->t_compute, r->t_comm));
        ck_assert_double_eq(r->t_serial, r->t_compute + r->t_comm);
        ck_assert_double_eq_tol(r->t_comm,
                                r->t_param + r->t_gradient + r->t_sync_grad + r->t_sync_param,
                                1e-12 * r->t_comm);
        if (!r->fits)
            seen_oom = TRUE;
        else
            ck_assert_msg(!seen_oom, "%s fits but ranks below an OOM entry", r->strategy->name);
        ck_assert(r->mem_total <= s->topology->gpu.memory_bytes || !r->fits);
    }
    /* DDP keeps 16 bytes per parameter: 107.8 GB for LLaMA-7B, beyond 80 GiB. */
    for (guint i = 0; i < g->results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(g->results, ParoStrategyResult, i);
        if (g_str_equal(r->strategy->name, "NNN"))
            ck_assert(!r->fits);
    }
}
END_TEST

START_TEST(scenario_paro_ranking_partial_training)
{
    /* System: LLaMA-65B, Psi' = Psi/16, 32 A100s, groups of 8 (PaRO's partial-training
     * setting, activation recomputation as the paper used for 65B).
     * Expectation (PaRO section 4, and its memory argument): ZeRO-1/2 and DDP run out of
     * memory (2*Psi = 130 GB of replicated parameters), while strategies that split
     * parameters inside the group and keep the small gradients group-local (IIG, ING) fit
     * and beat ZeRO-3 (GGG), whose global gathers cross the slow links every micro-step. */
    g_autofree char *model = paro_test_path("models/llama-65b.yaml");
    g_autofree char *swap = g_strdup_printf("model=%s", model);
    const char *sets[] = {swap, "training.trainable.fraction=1/16", "training.recompute=full",
                          NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = load(sets, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    g_autoptr(ParoScenarioDerived) g_derived = paro_scenario_derive(s);
    g_autoptr(ParoGuideline) g = paro_guideline_evaluate(g_derived);
    const ParoStrategyResult *by_name[64] = {0};
    for (guint i = 0; i < g->results->len; i++) {
        const ParoStrategyResult *r = &g_array_index(g->results, ParoStrategyResult, i);
        for (guint j = 0; j < paro_strategy_n_all(); j++)
            if (paro_strategy_get(j) == r->strategy)
                by_name[j] = r;
    }
#define R(name) by_name[paro_strategy_lookup(name) - paro_strategy_get(0)]
    ck_assert(!R("ddp")->fits && !R("zero-1")->fits && !R("zero-2")->fits);
    ck_assert(R("IIG")->fits && R("ING")->fits && R("zero-3")->fits);
    ck_assert_int_lt(R("IIG")->rank, R("zero-3")->rank);
    ck_assert_int_lt(R("ING")->rank, R("zero-3")->rank);
#undef R
}
END_TEST

START_TEST(scenario_calibration_replaces_peak_times_efficiency)
{
    /* The calibrated scenario takes the measured H100 figures of validation/fits:
     * 750.8 TFLOP/s and 2776.3 GB/s (the fit of validation/fits: median of the adam rows >= 256
     * MiB), whatever the topology's peak and the efficiency say. */
    g_autofree char *path = paro_test_path("scenarios/llama-7b_dgx-h100x8_n32-calibrated.yaml");
    g_autoptr(GError) error = NULL;
    g_autoptr(ParoScenario) s = paro_scenario_load(path, NULL, &error);
    ck_assert_msg(s != NULL, "%s", error ? error->message : "");
    ck_assert(s->calibration.present);
    ParoComputeSetup c = paro_scenario_compute_setup(s);
    ck_assert_double_eq_tol(c.flat_flops, 750.8e12, 1);
    ck_assert_double_eq_tol(c.hbm_Bps, 2776.3e9, 1);
    /* Without efficiency, an A100's GEMMs are timed by shape (no flat rate) at MAMF's
     * 267.9 of 312 TFLOP/s on 108 SMs (topo/topology.c's table); with efficiency 0.5
     * (`--set`), one flat rate of 0.5 x 312 TFLOP/s. */
    g_autoptr(ParoScenario) plain = load(NULL, NULL);
    ParoComputeSetup p = paro_scenario_compute_setup(plain);
    ck_assert_double_eq(p.flat_flops, 0);
    ck_assert_double_eq_tol(p.matmul_efficiency, 267.9 / 312.0, 1e-12);
    ck_assert_int_eq(p.sms, 108);
    const char *half[] = {"training.efficiency=0.5", NULL};
    g_autoptr(ParoScenario) flat = load(half, NULL);
    ck_assert_double_eq_tol(paro_scenario_compute_setup(flat).flat_flops, 312e12 * 0.5, 1);
}
END_TEST

static Suite *scenario_suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, scenario_default_loads);
    tcase_add_test(tc, scenario_set_overrides);
    tcase_add_test(tc, scenario_framework_profiles_set_defaults);
    tcase_add_test(tc, scenario_set_swaps_model_file);
    tcase_add_test(tc, scenario_bare_name_ignores_current_directory);
    tcase_add_loop_test(tc, scenario_set_errors_are_located, 0, G_N_ELEMENTS(bad_sets));
    tcase_add_test(tc, scenario_guideline_invariants);
    tcase_add_test(tc, scenario_memory_headroom_rule);
    tcase_add_test(tc, scenario_guideline_tight_rows);
    tcase_add_test(tc, scenario_fp8_weight_copies);
    tcase_add_test(tc, scenario_fp8_params_are_the_copies);
    tcase_add_test(tc, scenario_set_key_of_named_framework);
    tcase_add_test(tc, scenario_megatron_version_decides_async_dgrad);
    tcase_add_test(tc, scenario_framework_decides_rotary_kernels);
    tcase_add_test(tc, scenario_paro_ranking_partial_training);
    tcase_add_test(tc, scenario_calibration_replaces_peak_times_efficiency);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(scenario_suite)
