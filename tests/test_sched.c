/* SPDX-License-Identifier: MIT */
/* Oracles for the task-graph scheduler (sched/taskgraph.c): stream order and dependencies,
 * exact durations without sharing, the shared-link slowdown derived by hand, memory
 * changes in order, and the deadlock error. Times are plain picoseconds. */
#include <glib.h>
#include <string.h>

#include "check-main.h"
#include "core/error.h"
#include "mem/memory.h"
#include "sched/taskgraph.h"

static ParoTaskInfo info(const ParoTaskGraph *g, ParoTaskId t)
{
    return paro_task_graph_get(g, t);
}

START_TEST(sched_streams_and_dependencies)
{
    /* One device, streams 1 and 2. a (stream 1, 10) and c (stream 2, 4) start at 0; b
     * (stream 1, 5) follows a on the stream; d (stream 2, 3) also waits for b. Expected: a
     * [0, 10], b [10, 15], c [0, 4], d [15, 18] (it heads stream 2 from 4 but b ends at 15). */
    g_autoptr(ParoTaskGraph) g = paro_task_graph_new(1, 0, FALSE);
    ParoTaskId a = paro_task_graph_add(g, "a", PARO_TASK_COMPUTE, 0, 1, -1, -1, 10);
    ParoTaskId b = paro_task_graph_add(g, "b", PARO_TASK_COMPUTE, 0, 1, -1, -1, 5);
    ParoTaskId c = paro_task_graph_add(g, "c", PARO_TASK_COMM, 0, 2, -1, -1, 4);
    ParoTaskId d = paro_task_graph_add(g, "d", PARO_TASK_COMM, 0, 2, -1, -1, 3);
    paro_task_graph_depend(g, d, b);
    ck_assert(paro_task_graph_run(g, NULL));
    ck_assert_int_eq(info(g, a).end, 10);
    ck_assert_int_eq(info(g, b).start, 10);
    ck_assert_int_eq(info(g, c).end, 4);
    ck_assert_int_eq(info(g, d).start, 15);
    ck_assert_int_eq(paro_task_graph_makespan(g), 18);
    ck_assert_int_eq(paro_task_graph_kind_busy(g, 0, PARO_TASK_COMPUTE), 15);
    ck_assert_int_eq(paro_task_graph_stream_busy(g, 0, 2), 4 + 3);
    ck_assert_uint_eq(paro_task_graph_n_shared(g), 0);
}
END_TEST

START_TEST(sched_sharing_slows_by_max_min)
{
    /* Resource r shared by x (duration 1000, share 0.8) and y (duration 1000, share 0.6).
     * Alone each would end at 1000. Case 1, both start at 0: the shares sum to 1.4 > 1, so
     * progressive filling gives both speed 1/1.4; each needs 1000 units: both end at 1400.
     * Case 2, y starts at 500 (after a 500 task on its stream): x runs alone to 500 (500
     * units done), then both at 1/1.4: x's remaining 500 units take 700, x ends at 1200; y
     * did 700/1.4 = 500 units by then, its other 500 alone: y ends at 1700.
     * Case 3, shares 0.5 and 0.5 sum to 1: no slowdown, both end at 1000 exactly. */
    const struct {
        ParoTime delay;
        double sx, sy;
        ParoTime end_x, end_y;
    } cases[] = {{0, 0.8, 0.6, 1400, 1400}, {500, 0.8, 0.6, 1200, 1700}, {0, 0.5, 0.5, 1000, 1000}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(ParoTaskGraph) g = paro_task_graph_new(2, 1, FALSE);
        ParoTaskId x = paro_task_graph_add(g, "x", PARO_TASK_COMM, 0, 1, -1, -1, 1000);
        ParoTaskId wait =
            paro_task_graph_add(g, "wait", PARO_TASK_COMPUTE, 1, 1, -1, -1, cases[i].delay);
        ParoTaskId y = paro_task_graph_add(g, "y", PARO_TASK_COMM, 1, 1, -1, -1, 1000);
        (void)wait;
        paro_task_graph_use(g, x, 0, cases[i].sx);
        paro_task_graph_use(g, y, 0, cases[i].sy);
        ck_assert(paro_task_graph_run(g, NULL));
        ck_assert_int_eq(info(g, x).end, cases[i].end_x);
        ck_assert_int_eq(info(g, y).end, cases[i].end_y);
        ck_assert_uint_eq(paro_task_graph_n_shared(g), i < 2 ? 2 : 0);
    }
}
END_TEST

START_TEST(sched_sharing_over_two_resources)
{
    /* x uses r0 (0.9); y uses r0 (0.9) and r1 (0.5); z uses r1 (0.9). All 1000 long, all at 0.
     * Progressive filling: r0 saturates at level 1/1.8 = 0.5556 (r1 at 1/1.4 = 0.714 later),
     * so x and y freeze at 0.5556; z then rises until r1 is full: 0.5 x 0.5556 + 0.9 s = 1,
     * s = 0.8025. Ends: x and y at 1000 x 1.8 = 1800; z at 1000/0.8025 = 1246.15 -> 1247
     * (rounded up to the picosecond), after which nothing changes for x and y. */
    g_autoptr(ParoTaskGraph) g = paro_task_graph_new(3, 2, FALSE);
    ParoTaskId x = paro_task_graph_add(g, "x", PARO_TASK_COMM, 0, 1, -1, -1, 1000);
    ParoTaskId y = paro_task_graph_add(g, "y", PARO_TASK_COMM, 1, 1, -1, -1, 1000);
    ParoTaskId z = paro_task_graph_add(g, "z", PARO_TASK_COMM, 2, 1, -1, -1, 1000);
    paro_task_graph_use(g, x, 0, 0.9);
    paro_task_graph_use(g, y, 0, 0.9);
    paro_task_graph_use(g, y, 1, 0.5);
    paro_task_graph_use(g, z, 1, 0.9);
    ck_assert(paro_task_graph_run(g, NULL));
    ck_assert_int_eq(info(g, x).end, 1800);
    ck_assert_int_eq(info(g, y).end, 1800);
    double s = (1 - 0.5 / 1.8) / 0.9;
    ck_assert_int_eq(info(g, z).end, (ParoTime)(1000 / s) + 1);
}
END_TEST

START_TEST(sched_collectives_take_sms_from_compute)
{
    /* Device 0: compute k (stream 1, 1000 alone); collective c (stream 2, 400) holding 0.25
     * of the SMs from 0, then collective e (stream 2, 200) holding 0.5. Derived by hand:
     * c runs 0..400 (collectives are not slowed), k at 0.75 does 300 units by 400; e runs
     * 400..600, k at 0.5 does 100 more (400 by 600); alone again, k's last 600 units end it
     * at 1200. A compute task on device 1 (1000) is not slowed by device 0's collectives,
     * and a compute task that starts after them runs at full speed. */
    g_autoptr(ParoTaskGraph) g = paro_task_graph_new(2, 0, FALSE);
    ParoTaskId k = paro_task_graph_add(g, "k", PARO_TASK_COMPUTE, 0, 1, -1, -1, 1000);
    ParoTaskId after = paro_task_graph_add(g, "after", PARO_TASK_COMPUTE, 0, 1, -1, -1, 100);
    ParoTaskId c = paro_task_graph_add(g, "c", PARO_TASK_COMM, 0, 2, -1, -1, 400);
    ParoTaskId e = paro_task_graph_add(g, "e", PARO_TASK_COMM, 0, 2, -1, -1, 200);
    ParoTaskId other = paro_task_graph_add(g, "other", PARO_TASK_COMPUTE, 1, 1, -1, -1, 1000);
    paro_task_graph_take_sms(g, c, 0.25);
    paro_task_graph_take_sms(g, e, 0.5);
    ck_assert(paro_task_graph_run(g, NULL));
    ck_assert_int_eq(info(g, c).end, 400);
    ck_assert_int_eq(info(g, e).end, 600);
    ck_assert_int_eq(info(g, k).end, 1200);
    ck_assert_int_eq(info(g, after).end, 1300);
    ck_assert_int_eq(info(g, other).end, 1000);
    /* the slowdown counts as compute time: 1200 + 100 on device 0 */
    ck_assert_int_eq(paro_task_graph_kind_busy(g, 0, PARO_TASK_COMPUTE), 1200 + 100);
}
END_TEST

START_TEST(memory_ledger_allocator_pools)
{
    /* System: a ledger of one step by hand. t0: parameters 100 (compute pool), NCCL's
     * buffers 7 (outside the allocator); t1: a layer's gathered parameters 30 (gather pool);
     * t2: activations 200 (compute); t3: the gathered 30 freed; t4: the activations fall
     * to 120, then a gradient bucket 40 comes (reduce pool); t5: the bucket freed, activations 0;
     * t6: the optimizer's temporaries 150 (compute).
     * Expectation, by hand: the total peaks at t2 (100 + 7 + 30 + 200 = 337) and allocated
     * is that less the 7 outside (330); the compute pool peaks at t2 (300; t6 holds 250),
     * the gather pool at 30, the reduce pool at 40: the caching allocator, which serves a
     * stream's tensors from that stream's freed blocks only, holds 300 + 30 + 40 = 370 from
     * the driver, 40 above the allocated peak (CUDACachingAllocator.cpp's per-stream
     * BlockPool lookup; decision 94). */
    g_autoptr(ParoMemLedger) l = paro_mem_ledger_new(FALSE);
    paro_mem_ledger_change(l, 0, PARO_MEM_PARAMS, 100);
    paro_mem_ledger_change(l, 0, PARO_MEM_COMM_BUFFERS, 7);
    paro_mem_ledger_change(l, 1, PARO_MEM_GATHERED, 30);
    paro_mem_ledger_change(l, 2, PARO_MEM_ACTIVATIONS, 200);
    paro_mem_ledger_change(l, 3, PARO_MEM_GATHERED, -30);
    paro_mem_ledger_change(l, 4, PARO_MEM_ACTIVATIONS, -80);
    paro_mem_ledger_change(l, 4, PARO_MEM_BUCKETS, 40);
    paro_mem_ledger_change(l, 5, PARO_MEM_BUCKETS, -40);
    paro_mem_ledger_change(l, 5, PARO_MEM_ACTIVATIONS, -120);
    paro_mem_ledger_change(l, 6, PARO_MEM_OPTIMIZER_TEMPS, 150);
    ck_assert_double_eq(paro_mem_ledger_peak(l, NULL), 337);
    ck_assert_double_eq(paro_mem_ledger_allocated_peak(l), 330);
    ck_assert_double_eq(paro_mem_ledger_pool_peak(l, PARO_MEM_POOL_COMPUTE), 300);
    ck_assert_double_eq(paro_mem_ledger_pool_peak(l, PARO_MEM_POOL_GATHER), 30);
    ck_assert_double_eq(paro_mem_ledger_pool_peak(l, PARO_MEM_POOL_REDUCE), 40);
    ck_assert_double_eq(paro_mem_ledger_pool_peak(l, PARO_MEM_POOL_OUTSIDE), 7);
    ck_assert_double_eq(paro_mem_ledger_reserved_peak(l), 370);
    /* gradients moved to the reduce pool (FSDP's reduce-scatter output) count there */
    g_autoptr(ParoMemLedger) m = paro_mem_ledger_new(FALSE);
    paro_mem_ledger_set_pool(m, PARO_MEM_GRADS, PARO_MEM_POOL_REDUCE);
    paro_mem_ledger_change(m, 0, PARO_MEM_ACTIVATIONS, 50);
    paro_mem_ledger_change(m, 1, PARO_MEM_ACTIVATIONS, -50);
    paro_mem_ledger_change(m, 1, PARO_MEM_GRADS, 20);
    ck_assert_double_eq(paro_mem_ledger_allocated_peak(m), 50);
    ck_assert_double_eq(paro_mem_ledger_reserved_peak(m), 70);
}
END_TEST

START_TEST(sched_memory_in_order_and_deadlock)
{
    /* Memory: a task adds 100 at its start and frees it at its end; another adds 50 while
     * the first runs: peak 150. A dependency against the stream order (b heads the stream
     * after a but depends on c, which follows b on the same stream) never runs: an error
     * that names the first task that never started. */
    g_autoptr(ParoTaskGraph) g = paro_task_graph_new(1, 0, FALSE);
    ParoTaskId a = paro_task_graph_add(g, "a", PARO_TASK_COMPUTE, 0, 1, -1, -1, 10);
    ParoTaskId b = paro_task_graph_add(g, "b", PARO_TASK_COMM, 0, 2, -1, -1, 4);
    paro_task_graph_on_start(g, a, PARO_MEM_ACTIVATIONS, 100);
    paro_task_graph_on_end(g, a, PARO_MEM_ACTIVATIONS, -100);
    paro_task_graph_on_start(g, b, PARO_MEM_GATHERED, 50);
    paro_task_graph_on_end(g, b, PARO_MEM_GATHERED, -50);
    ck_assert(paro_task_graph_run(g, NULL));
    ck_assert_double_eq(paro_mem_ledger_peak(paro_task_graph_ledger(g, 0), NULL), 150);

    g_autoptr(ParoTaskGraph) stuck = paro_task_graph_new(1, 0, FALSE);
    paro_task_graph_add(stuck, "a", PARO_TASK_COMPUTE, 0, 1, -1, -1, 1);
    ParoTaskId sb = paro_task_graph_add(stuck, "b", PARO_TASK_COMPUTE, 0, 1, -1, -1, 1);
    ParoTaskId sc = paro_task_graph_add(stuck, "c", PARO_TASK_COMPUTE, 0, 1, -1, -1, 1);
    paro_task_graph_depend(stuck, sb, sc);
    g_autoptr(GError) error = NULL;
    ck_assert(!paro_task_graph_run(stuck, &error));
    ck_assert(g_error_matches(error, PARO_SIM_ERROR, PARO_SIM_ERROR_DEADLOCK));
    ck_assert_msg(strstr(error->message, "first is b") != NULL, "%s", error->message);
}
END_TEST

static Suite *sched_suite(void)
{
    Suite *s = suite_create("sched");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, sched_streams_and_dependencies);
    tcase_add_test(tc, memory_ledger_allocator_pools);
    tcase_add_test(tc, sched_sharing_slows_by_max_min);
    tcase_add_test(tc, sched_sharing_over_two_resources);
    tcase_add_test(tc, sched_collectives_take_sms_from_compute);
    tcase_add_test(tc, sched_memory_in_order_and_deadlock);
    suite_add_tcase(s, tc);
    return s;
}

PARO_CHECK_MAIN(sched_suite)
