/* SPDX-License-Identifier: MIT */
/* The checks a scenario's values must pass together once the schema has read them (each
 * key alone is the schema's): the layout of tensor, context, pipeline, data and expert
 * parallelism on the cluster's nodes (decisions 64, 71, 72), the pipeline's shape, the PaRO
 * group, LoRA, fp8 and offload; each refusal located at the key that decides it. */
#include "scenario/scenario-private.h"

#include <string.h>

#include "yaml/schema.h"

/* The node of parallelism.@key when written, else the parallelism mapping, else the root. */
/* @key of @node when @node is a mapping that writes it, else NULL (NULL for a NULL @node):
 * for locating a refusal at the nested key that decides it. */
static const ParoNode *mapping_child(const ParoNode *node, const char *key)
{
    return node && node->kind == PARO_NODE_MAPPING ? paro_node_lookup(node, key) : NULL;
}

static const ParoNode *parallelism_node(const ParoNode *root, const char *key)
{
    const ParoNode *par = paro_node_lookup(root, "parallelism");
    if (par == NULL || par->kind != PARO_NODE_MAPPING)
        return root;
    const ParoNode *v = paro_node_lookup(par, key);
    return v ? v : par;
}

/* Stages of unequal layers (decisions 38 and 86): pp counts, one a stage, each split
 * equally over the stage's virtual modules (Megatron-Core's first/last-stage layer counts
 * with virtual stages), or pp x virtual counts, one a module in layer order (module k on
 * stage k mod pp, its chunk k / pp: Megatron-Core's pipeline_model_parallel_layout); any
 * schedule, since the step runs each module's own layers. */
static gboolean check_stage_layers(const ParoScenario *s, const ParoNode *root, GError **error)
{
    const ParoNode *where = parallelism_node(root, "stage_layers");
    gint64 v = s->training.pipeline_virtual;
    gint64 n = s->stage_layers->len, sum = 0, odd = -1;
    for (guint i = 0; i < s->stage_layers->len; i++) {
        gint64 count = g_array_index(s->stage_layers, gint64, i);
        sum += count;
        if (odd < 0 && n == s->pp && count % v != 0)
            odd = i;
    }
    if (n != s->pp && n != s->pp * v) {
        if (v > 1)
            paro_node_error(error, where, PARO_CONFIG_ERROR_CONSTRAINT,
                            "stage_layers gives %" G_GINT64_FORMAT
                            " counts: it needs one a stage (pp %" G_GINT64_FORMAT
                            ") or one a module (pp x virtual = %" G_GINT64_FORMAT ")",
                            n, s->pp, s->pp * v);
        else
            paro_node_error(error, where, PARO_CONFIG_ERROR_CONSTRAINT,
                            "stage_layers gives %" G_GINT64_FORMAT
                            " counts: it needs one a pipeline stage (pp %" G_GINT64_FORMAT ")",
                            n, s->pp);
        return FALSE;
    }
    if (!s->model->has_shape) {
        paro_node_error(error, where, PARO_CONFIG_ERROR_CONSTRAINT,
                        "stage_layers splits the model's layers, but model '%s' gives only a "
                        "parameter count",
                        s->model->name);
        return FALSE;
    }
    if (sum != s->model->layers) {
        paro_node_error(error, where, PARO_CONFIG_ERROR_CONSTRAINT,
                        "stage_layers sums to %" G_GINT64_FORMAT
                        " layers, but the model has %" G_GINT64_FORMAT,
                        sum, s->model->layers);
        return FALSE;
    }
    if (v > 1 && odd >= 0) {
        paro_node_error(error, where, PARO_CONFIG_ERROR_CONSTRAINT,
                        "stage %" G_GINT64_FORMAT "'s %" G_GINT64_FORMAT
                        " layers do not split into its virtual %" G_GINT64_FORMAT
                        " modules: give a multiple of %" G_GINT64_FORMAT
                        " a stage, or one count a module (pp x virtual = %" G_GINT64_FORMAT ")",
                        odd, g_array_index(s->stage_layers, gint64, odd), v, v, s->pp * v);
        return FALSE;
    }
    return TRUE;
}

/* Context and expert parallelism: cp splits the sequence, placed after TP on a node's GPUs
 * (decision 71); ep x etp split the routed experts over a stage's tp x cp x dp GPUs, etp
 * being tp or 1 (decision 72). */
static gboolean check_cp_ep(ParoScenario *s, const ParoNode *root, GError **error)
{
    gint64 gpn = s->topology->gpus_per_node, tc = s->tp * s->cp, seq = s->training.sequence;
    const ParoModel *m = s->model;
    if (s->cp > 1 && !m->has_shape) {
        paro_node_error(error, parallelism_node(root, "cp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "context parallelism splits attention by the model's shape, but model "
                        "'%s' gives only a parameter count",
                        m->name);
        return FALSE;
    }
    if (s->cp > 1 && !(gpn % tc == 0 || tc % gpn == 0)) {
        paro_node_error(error, parallelism_node(root, "cp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "tp %" G_GINT64_FORMAT " x cp %" G_GINT64_FORMAT
                        " must divide, or be a multiple of, the %" G_GINT64_FORMAT
                        " GPUs of a node (context-parallel ranks follow the tensor-parallel "
                        "ones on a node)",
                        s->tp, s->cp, gpn);
        return FALSE;
    }
    /* ring and all-gather balance a causal mask by 2 x cp chunks (Transformer Engine,
     * torchtitan); Ulysses gives each rank whole heads */
    gint64 chunks = s->cp_algorithm == PARO_CP_ALLTOALL ? s->cp : 2 * s->cp;
    if (s->cp > 1 && seq % chunks != 0) {
        paro_node_error(error, parallelism_node(root, "cp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "cp %" G_GINT64_FORMAT
                        " with the %s algorithm cuts each sequence into %" G_GINT64_FORMAT
                        " chunks, which must divide its %" G_GINT64_FORMAT " tokens",
                        s->cp, paro_cp_algorithm_names[s->cp_algorithm], chunks, seq);
        return FALSE;
    }
    if (s->cp > 1 && s->cp_algorithm == PARO_CP_ALLTOALL && m->heads % tc != 0) {
        paro_node_error(error, parallelism_node(root, "cp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "the alltoall (Ulysses) algorithm gives each of tp %" G_GINT64_FORMAT
                        " x cp %" G_GINT64_FORMAT
                        " ranks whole heads, but the model has %" G_GINT64_FORMAT " heads",
                        s->tp, s->cp, m->heads);
        return FALSE;
    }
    if (s->training.moe_imbalance < 1.0) {
        const ParoNode *moe = mapping_child(mapping_child(root, "training"), "moe");
        const ParoNode *at = mapping_child(moe, "imbalance");
        paro_node_error(error, at ? at : root, PARO_CONFIG_ERROR_CONSTRAINT,
                        "imbalance %g is the hottest expert's tokens over the mean: at least 1",
                        s->training.moe_imbalance);
        return FALSE;
    }
    if (s->etp == 0)
        s->etp = s->tp;
    if (s->etp != s->tp && s->etp != 1) {
        paro_node_error(error, parallelism_node(root, "etp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "etp %" G_GINT64_FORMAT " is neither tp %" G_GINT64_FORMAT
                        " (Megatron-Core's default) nor 1 (whole experts): the only expert "
                        "tensor parallelism modelled",
                        s->etp, s->tp);
        return FALSE;
    }
    if (s->ep > 1 && m->experts == 0) {
        paro_node_error(error, parallelism_node(root, "ep"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "ep %" G_GINT64_FORMAT " needs a mixture of experts, but model '%s' is "
                        "dense",
                        s->ep, m->name);
        return FALSE;
    }
    if (s->ep > 1 && m->experts % s->ep != 0) {
        paro_node_error(error, parallelism_node(root, "ep"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "ep %" G_GINT64_FORMAT " must divide the model's %" G_GINT64_FORMAT
                        " experts",
                        s->ep, m->experts);
        return FALSE;
    }
    /* Megatron-Core folds the expert layers' ranks apart from the dense ones': the tp x cp x
     * dp GPUs of a stage are etp x ep x expert-dp, in that order (decision 72) */
    gint64 world = s->tp * paro_scenario_dp_ranks(s), folded = s->ep * s->etp;
    if (world % folded != 0) {
        paro_node_error(error, parallelism_node(root, "ep"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "ep %" G_GINT64_FORMAT " x etp %" G_GINT64_FORMAT
                        " must divide the %" G_GINT64_FORMAT
                        " GPUs of a stage (tp x cp x dp) the experts are split over",
                        s->ep, s->etp, world);
        return FALSE;
    }
    gint64 stage_per_node = s->tp * paro_scenario_dp_per_node(s);
    if (s->ep > 1 && !(stage_per_node % folded == 0 || folded % stage_per_node == 0)) {
        paro_node_error(error, parallelism_node(root, "ep"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "ep %" G_GINT64_FORMAT " x etp %" G_GINT64_FORMAT
                        " must divide, or be a multiple of, the %" G_GINT64_FORMAT
                        " GPUs of a stage on a node (expert-parallel ranks are neighbours)",
                        s->ep, s->etp, stage_per_node);
        return FALSE;
    }
    return TRUE;
}

/* "tp T x pp P", with " x cp C" when context parallelism is on: the degrees dp multiplies. */
static char *fixed_degrees(const ParoScenario *s)
{
    return s->cp > 1
               ? g_strdup_printf("tp %" G_GINT64_FORMAT " x pp %" G_GINT64_FORMAT
                                 " x cp %" G_GINT64_FORMAT,
                                 s->tp, s->pp, s->cp)
               : g_strdup_printf("tp %" G_GINT64_FORMAT " x pp %" G_GINT64_FORMAT, s->tp, s->pp);
}

/* tp*cp*pp*dp = GPUs; TP inside a node; whole DP peers per node; pipeline shape. */
static gboolean check_3d(ParoScenario *s, const ParoNode *root, GError **error)
{
    gint64 total = paro_topology_n_gpus(s->topology), gpn = s->topology->gpus_per_node;
    /* Each degree is within its limit (tp <= 4096, pp <= 4096, cp, dp <= 2^36), so the
     * products below stay far from 2^63 for any cluster of at most 2^36 GPUs. */
    gint64 fixed = s->tp * s->pp * s->cp;
    if (s->dp == 0 && (s->cp > total || total % fixed != 0)) {
        const char *key = total % s->tp != 0 ? "tp" : total % (s->tp * s->pp) != 0 ? "pp" : "cp";
        g_autofree char *degrees = fixed_degrees(s);
        paro_node_error(error, parallelism_node(root, key), PARO_CONFIG_ERROR_CONSTRAINT,
                        "%s does not divide the %" G_GINT64_FORMAT
                        " GPUs, so no data-parallel degree dp fills the cluster",
                        degrees, total);
        return FALSE;
    }
    if (s->dp == 0)
        s->dp = total / fixed;
    if (s->cp > total || s->dp > total || fixed * s->dp != total) {
        g_autofree char *degrees = fixed_degrees(s);
        paro_node_error(error, parallelism_node(root, "dp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "%s x dp %" G_GINT64_FORMAT " must equal the %" G_GINT64_FORMAT " GPUs",
                        degrees, s->dp, total);
        return FALSE;
    }
    if (gpn % s->tp != 0) {
        paro_node_error(error, parallelism_node(root, "tp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "tp %" G_GINT64_FORMAT " must divide the %" G_GINT64_FORMAT
                        " GPUs of a node (tensor parallelism stays inside a node)",
                        s->tp, gpn);
        return FALSE;
    }
    if (!check_cp_ep(s, root, error))
        return FALSE;
    /* The step maps a stage's DP ranks (dp x cp) onto whole nodes (coll-cache.c), each node
     * holding gpn/tp of them, or, with fewer DP ranks than that, a node onto whole stages
     * (Megatron's order: TP ranks, then CP, then DP, then PP): gpn/(tp dp cp) neighbouring
     * stages a node. */
    gint64 q = gpn / s->tp, n = paro_scenario_dp_ranks(s);
    if (n >= q ? n % q != 0 : q % n != 0) {
        g_autofree char *ranks =
            s->cp > 1
                ? g_strdup_printf("dp %" G_GINT64_FORMAT " x cp %" G_GINT64_FORMAT, s->dp, s->cp)
                : g_strdup_printf("dp %" G_GINT64_FORMAT, s->dp);
        paro_node_error(error, parallelism_node(root, "dp"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "%s must be a multiple of the %" G_GINT64_FORMAT
                        " data-parallel ranks a node holds (GPUs per node / tp), or divide "
                        "them, so that a stage's data-parallel ranks fill whole nodes or a "
                        "node holds whole stages",
                        ranks, q);
        return FALSE;
    }
    const ParoNode *pipe = mapping_child(mapping_child(root, "training"), "pipeline");
    const ParoNode *where_pipe = pipe ? pipe : parallelism_node(root, "pp");
    gint64 v = s->training.pipeline_virtual, modules = s->pp * v;
    int schedule = s->training.pipeline_schedule;
    if (v > 1 && schedule != PARO_PIPE_INTERLEAVED && schedule != PARO_PIPE_MODULAR) {
        paro_node_error(error, where_pipe, PARO_CONFIG_ERROR_CONSTRAINT,
                        "virtual %" G_GINT64_FORMAT " needs the interleaved or modular schedule",
                        v);
        return FALSE;
    }
    if (s->training.accumulation_order == PARO_PIPE_LAYERED && schedule != PARO_PIPE_GPIPE &&
        schedule != PARO_PIPE_MODULAR) {
        paro_node_error(error, where_pipe, PARO_CONFIG_ERROR_CONSTRAINT,
                        "layered accumulation runs every micro-batch through a module before the "
                        "next: it needs the gpipe or modular schedule, not %s",
                        paro_pipe_schedule_names[schedule]);
        return FALSE;
    }
    if (s->stage_layers != NULL && !check_stage_layers(s, root, error))
        return FALSE;
    if (s->stage_layers == NULL && (s->pp > 1 || v > 1) &&
        (!s->model->has_shape || s->model->layers % modules != 0)) {
        paro_node_error(
            error, where_pipe, PARO_CONFIG_ERROR_CONSTRAINT,
            "pp %" G_GINT64_FORMAT " x virtual %" G_GINT64_FORMAT
            " must divide the model's %" G_GINT64_FORMAT
            " layers (or give parallelism.stage_layers: the layers of each stage or module)",
            s->pp, v, s->model->layers);
        return FALSE;
    }
    if (s->training.pipeline_schedule == PARO_PIPE_INTERLEAVED &&
        s->training.accumulation % s->pp != 0) {
        paro_node_error(error, where_pipe, PARO_CONFIG_ERROR_CONSTRAINT,
                        "the interleaved schedule needs the accumulation (%" G_GINT64_FORMAT
                        " micro-batches) to be a multiple of pp %" G_GINT64_FORMAT,
                        s->training.accumulation, s->pp);
        return FALSE;
    }
    return TRUE;
}

/* The node of training.offload.@key when written, else training.offload, else the root. */
static const ParoNode *offload_node(const ParoNode *root, const char *key)
{
    const ParoNode *off = mapping_child(mapping_child(root, "training"), "offload");
    if (off == NULL || off->kind != PARO_NODE_MAPPING)
        return off ? off : root;
    const ParoNode *v = paro_node_lookup(off, key);
    return v ? v : off;
}

/* What offloading needs (decisions 80-82): NVMe figures for nvme; parameters offloaded only
 * where a framework shards them (ZeRO stage 3, FSDP); FSDP's one CPUOffload flag moving
 * parameters, gradients and the optimizer together; activations offloaded as full
 * recomputation's checkpoints. */
static gboolean check_offload(const ParoScenario *s, const ParoNode *root, GError **error)
{
    const ParoOffload *o = &s->training.offload;
    const ParoTopology *t = s->topology;
    if (s->ep > 1 && paro_scenario_offloads(s)) {
        paro_node_error(error, parallelism_node(root, "ep"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "ep %" G_GINT64_FORMAT " with training.offload: offloading the routed "
                        "experts' states, sharded over their own group, is not modelled",
                        s->ep);
        return FALSE;
    }
    const char *keys[] = {"optimizer", "parameters"};
    const ParoOffloadTarget targets[] = {o->optimizer, o->parameters};
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++)
        if (targets[i] == PARO_OFFLOAD_NVME &&
            (t->host.nvme_read_Bps == 0 || t->host.nvme_write_Bps == 0)) {
            paro_node_error(error, offload_node(root, keys[i]), PARO_CONFIG_ERROR_CONSTRAINT,
                            "%s: nvme needs the node's NVMe bandwidth, but topology '%s' gives "
                            "no node.host.nvme_read and nvme_write",
                            keys[i], t->name);
            return FALSE;
        }
    ParoFrameworkKind fw = s->framework.kind;
    if (o->parameters != PARO_OFFLOAD_NONE &&
        (fw == PARO_FRAMEWORK_MEGATRON || (fw == PARO_FRAMEWORK_DEEPSPEED && s->pp > 1))) {
        paro_node_error(
            error, offload_node(root, "parameters"), PARO_CONFIG_ERROR_CONSTRAINT,
            "parameters: %s offloads the parameter shards ZeRO stage 3 gathers, but %s keeps "
            "whole parameters on every GPU (%s)",
            paro_offload_names[o->parameters],
            fw == PARO_FRAMEWORK_MEGATRON ? "megatron" : "deepspeed with pp > 1",
            fw == PARO_FRAMEWORK_MEGATRON
                ? "Megatron-Core's distributed optimizer shards the optimizer state only"
                : "DeepSpeed's pipeline engine runs ZeRO stage 0 or 1; offload_param is stage 3's");
        return FALSE;
    }
    if (fw == PARO_FRAMEWORK_FSDP &&
        (o->optimizer == PARO_OFFLOAD_NVME || o->parameters == PARO_OFFLOAD_NVME ||
         o->optimizer != o->parameters)) {
        const char *key = o->parameters == PARO_OFFLOAD_NONE ? "optimizer" : "parameters";
        paro_node_error(error, offload_node(root, key), PARO_CONFIG_ERROR_CONSTRAINT,
                        "fsdp offloads with one flag, CPUOffload(offload_params=True), which "
                        "moves parameters, gradients and the optimizer step to the CPU "
                        "together: it needs optimizer: cpu and parameters: cpu (got %s and %s)",
                        paro_offload_names[o->optimizer], paro_offload_names[o->parameters]);
        return FALSE;
    }
    if (o->activations != PARO_OFFLOAD_NONE && s->training.recompute != PARO_RECOMPUTE_FULL) {
        paro_node_error(error, offload_node(root, "activations"), PARO_CONFIG_ERROR_CONSTRAINT,
                        "activations: cpu moves the checkpoints of full recomputation to host "
                        "memory (DeepSpeed's cpu_checkpointing): it needs recompute: full, not %s",
                        paro_recompute_names[s->training.recompute]);
        return FALSE;
    }
    return TRUE;
}

gboolean paro_scenario_check(ParoScenario *s, const ParoNode *root, GError **error)
{
    if (!check_3d(s, root, error))
        return FALSE;
    if (s->group == 0)
        s->group = paro_scenario_dp_per_node(s);
    /* With tp = pp = 1: n = all GPUs and DP peers per node = GPUs per node, as before. */
    gint64 n = paro_scenario_dp_ranks(s), gpn = paro_scenario_dp_per_node(s), m = s->group;
    const ParoNode *where = root;
    const ParoNode *par = paro_node_lookup(root, "parallelism");
    if (par && par->kind == PARO_NODE_MAPPING && paro_node_lookup(par, "group"))
        where = paro_node_lookup(par, "group");
    if (m > n || n % m != 0) {
        paro_node_error(error, where, PARO_CONFIG_ERROR_CONSTRAINT,
                        "%" G_GINT64_FORMAT " GPUs (%" G_GINT64_FORMAT " nodes x %" G_GINT64_FORMAT
                        ") cannot be divided into groups of %" G_GINT64_FORMAT,
                        n, s->topology->nodes, s->topology->gpus_per_node, m);
        return FALSE;
    }
    if (!(gpn % m == 0 || m % gpn == 0)) {
        paro_node_error(error, where, PARO_CONFIG_ERROR_CONSTRAINT,
                        "group size %" G_GINT64_FORMAT
                        " must divide, or be a multiple of, the %" G_GINT64_FORMAT
                        " GPUs of a node",
                        m, gpn);
        return FALSE;
    }
    const ParoNode *training = paro_node_lookup(root, "training");
    const ParoNode *trainable = mapping_child(training, "trainable");
    if (s->training.trainable.kind == PARO_TRAINABLE_LORA && !s->model->has_shape) {
        paro_node_error(error, trainable, PARO_CONFIG_ERROR_CONSTRAINT,
                        "LoRA needs the model's architecture, but model '%s' gives only a "
                        "parameter count",
                        s->model->name);
        return FALSE;
    }
    const ParoNode *fp8 = mapping_child(training, "fp8");
    ParoGpuArch arch = s->topology->gpu.arch;
    if (s->training.fp8 && (arch == PARO_ARCH_SM70 || arch == PARO_ARCH_SM80)) {
        paro_node_error(error, fp8, PARO_CONFIG_ERROR_CONSTRAINT,
                        "fp8 products need fp8 tensor cores (Hopper, sm90, or later); GPU '%s' "
                        "is %s",
                        s->topology->gpu.name, paro_gpu_arch_names[arch]);
        return FALSE;
    }
    if (s->training.recompute == PARO_RECOMPUTE_OP &&
        (!s->model->has_shape || s->model->experts > 0)) {
        paro_node_error(
            error, paro_node_lookup(training, "recompute"), PARO_CONFIG_ERROR_CONSTRAINT,
            "recompute: op follows the products of a dense transformer block, but "
            "model '%s' %s",
            s->model->name, s->model->has_shape ? "has experts" : "gives only a parameter count");
        return FALSE;
    }
    if (s->training.recompute_every > 1 && s->training.recompute != PARO_RECOMPUTE_FULL) {
        paro_node_error(error, paro_node_lookup(training, "recompute_every"),
                        PARO_CONFIG_ERROR_CONSTRAINT,
                        "recompute_every %" G_GINT64_FORMAT " picks the layers that full "
                        "recomputation checkpoints: it needs recompute: full, not %s",
                        s->training.recompute_every, paro_recompute_names[s->training.recompute]);
        return FALSE;
    }
    if (s->training.fp8_params && !s->training.fp8) {
        paro_node_error(error, fp8 ? fp8 : paro_node_lookup(training, "fp8_params"),
                        PARO_CONFIG_ERROR_CONSTRAINT,
                        "fp8_params holds the weights of fp8 products: it needs fp8: true");
        return FALSE;
    }
    if (s->training.fp8_attention &&
        (!s->training.fp8 || s->training.attention != PARO_ATTENTION_CUDNN)) {
        paro_node_error(error, paro_node_lookup(training, "fp8_attention"),
                        PARO_CONFIG_ERROR_CONSTRAINT,
                        "fp8_attention is Transformer Engine's fp8 cuDNN attention: it needs "
                        "fp8: true and attention: cudnn");
        return FALSE;
    }
    if (s->training.fp8 && !s->model->has_shape) {
        paro_node_error(error, fp8, PARO_CONFIG_ERROR_CONSTRAINT,
                        "fp8 runs the linear layers' products in fp8, but model '%s' gives only a "
                        "parameter count, not its layers",
                        s->model->name);
        return FALSE;
    }
    if (!check_offload(s, root, error))
        return FALSE;
    /* a headroom in bytes (a share is held to [0, 0.5] by its parser) leaves some memory
     * to fit in (decision 85) */
    const ParoHeadroom *headroom = &s->training.memory_headroom;
    if (headroom->bytes && headroom->value >= s->topology->gpu.memory_bytes) {
        char gib[G_ASCII_DTOSTR_BUF_SIZE], memory[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(gib, sizeof gib, "%.4g", headroom->value / 1073741824.0);
        g_ascii_formatd(memory, sizeof memory, "%.4g",
                        s->topology->gpu.memory_bytes / 1073741824.0);
        paro_node_error(error, mapping_child(training, "memory_headroom"), PARO_CONFIG_ERROR_RANGE,
                        "memory_headroom of %s GiB leaves nothing of the %s GPU's %s GiB: it "
                        "must be less than the GPU's memory",
                        gib, s->topology->gpu.name, memory);
        return FALSE;
    }
    double trainable_params,
        params = paro_model_params(s->model, &s->training.trainable, &trainable_params);
    if (trainable_params > params) {
        paro_node_error(error, trainable, PARO_CONFIG_ERROR_RANGE,
                        "%.6g trainable parameters exceed the model's %.6g", trainable_params,
                        params);
        return FALSE;
    }
    return TRUE;
}
