package org.switchml.spark.driver;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.switchml.protocol.Wire;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.messages.Endpoints;
import org.switchml.spark.messages.Rendezvous;
import org.switchml.spark.messages.TaskSettings;

/**
 * How a barrier stage runs, as a pure function of where its tasks landed: the executors are the
 * switch's workers (one rank each, in the order of their lowest task), the source partitions are spread
 * over the tasks (each preferably on the executor that caches it, with no task taking much more than
 * its share), and k and the pool follow the path.
 */
public final class StagePlans {
    /** The software switch's best measured k on loopback (docs/results/README.md, "k, pool and lanes on loopback"); larger buys nothing. */
    public static final int BEST_SOFTWARE_K = 4096;
    /** Bytes in flight per worker that the auto pool size aims at: 8 slots of k = 4096 (docs/results/README.md, "k, pool and lanes on loopback"). */
    static final int IN_FLIGHT_BYTES = 128 * 1024;
    /** k when nothing is known about the path: fits a 1500-byte Ethernet MTU. */
    static final int DEFAULT_MTU = 1500;

    private StagePlans() {}

    /**
     * The plan.
     *
     * @param switchAddress the switch's dataplane address
     * @param hellos    one per task, all present
     * @param preferred per source partition, the id of the executor that caches it, or null
     * @param requiredK the only k the switch accepts (0: any)
     * @param switchMtu MTU of the switch's interface (0: unknown)
     * @throws IllegalStateException when the tasks span more executors than a switch job has workers
     */
    static Rendezvous.Plan make(
            final String switchAddress,
            final TaskSettings s,
            final Rendezvous.Hello[] hellos,
            final String[] preferred,
            final int requiredK,
            final int switchMtu) {
        return make(switchAddress, s, hellos, preferred, requiredK, switchMtu, null);
    }

    /**
     * As {@link #make(String, TaskSettings, Rendezvous.Hello[], String[], int, int)}, with the ranks given
     * by {@code order} (executor ids) when it names exactly the executors the tasks run on: the order of
     * a job installed ahead of the stage.
     */
    static Rendezvous.Plan make(
            final String switchAddress,
            final TaskSettings s,
            final Rendezvous.Hello[] hellos,
            final String[] preferred,
            final int requiredK,
            final int switchMtu,
            final List<String> order) {
        final int tasks = hellos.length;
        // Executors in the order of their lowest task index (deterministic for a given placement), or the
        // given order when it fits.
        final Map<String, Integer> rankOf = new LinkedHashMap<>();
        final Map<String, String> endpointOf = new LinkedHashMap<>();
        int minMtu = Integer.MAX_VALUE;
        for (final Rendezvous.Hello h : hellos) {
            endpointOf.putIfAbsent(h.executorId(), h.endpoint());
            if (h.mtu() > 0) {
                minMtu = Math.min(minMtu, h.mtu());
            }
        }
        final List<String> ranked = order != null
                        && order.size() == endpointOf.size()
                        && endpointOf.keySet().containsAll(order)
                ? order
                : new ArrayList<>(endpointOf.keySet());
        final List<String> endpoints = new ArrayList<>();
        for (final String e : ranked) {
            rankOf.put(e, rankOf.size());
            endpoints.add(endpointOf.get(e));
        }
        if (rankOf.size() > Wire.MAX_WORKERS) {
            throw new IllegalStateException("spark-switchml: the stage's tasks run on " + rankOf.size()
                    + " executors, but a switch job has at most " + Wire.MAX_WORKERS + " workers (one per executor)");
        }
        final int[] rankOfTask = new int[tasks];
        final int[] localIndex = new int[tasks];
        final int[] localCount = new int[rankOf.size()];
        for (int t = 0; t < tasks; t++) {
            final int r = rankOf.get(hellos[t].executorId());
            rankOfTask[t] = r;
            localIndex[t] = localCount[r]++;
        }
        if (switchMtu > 0) {
            minMtu = Math.min(minMtu, switchMtu);
        }
        final int k = chooseK(s, requiredK, minMtu == Integer.MAX_VALUE ? 0 : minMtu);
        final int pool = s.poolSize() > 0 ? s.poolSize() : autoPool(k);
        final Rendezvous.Shard[] one = {new Rendezvous.Shard(switchAddress, s.jobId(), s.generation(), 0, pool, 1, -1)};
        return new Rendezvous.Plan(
                one,
                k,
                endpoints.toArray(new String[0]),
                rankOfTask,
                localIndex,
                localCount,
                assign(hellos, preferred, rankOf, rankOfTask),
                false);
    }

    /** The smallest pool of one shard of a sharded job. */
    static final int MIN_SHARD_POOL = 4;

    /** {@code spark.switchml.k} when set, else what the switch requires, else what the MTU allows. */
    static int chooseK(final TaskSettings s, final int requiredK, final int mtu) {
        int k;
        if (s.k() > 0) {
            k = s.k();
        } else if (requiredK > 0) {
            k = requiredK;
        } else {
            k = Math.min(BEST_SOFTWARE_K, Endpoints.kForMtu(mtu > 0 ? mtu : DEFAULT_MTU));
        }
        if (s.fp64() && (k & 1) != 0) {
            if (s.k() > 0 || requiredK > 0) {
                throw new IllegalArgumentException(SwitchMLConfig.K.key() + "=" + k + " must be even with "
                        + SwitchMLConfig.PRECISION.key() + "=fp64 (two lanes per element)");
            }
            k--;
        }
        return Math.max(2, k);
    }

    /** Slots so that about {@link #IN_FLIGHT_BYTES} are in flight per worker, within 4..128. */
    static int autoPool(final int k) {
        return Math.max(4, Math.min(128, IN_FLIGHT_BYTES / (4 * k)));
    }

    /**
     * Source partitions per task: each goes to the least loaded task on the executor that caches it,
     * unless that task already has its share ({@code ceil(P / tasks)}), else to the least loaded task.
     */
    static int[][] assign(
            final Rendezvous.Hello[] hellos,
            final String[] preferred,
            final Map<String, Integer> rankOf,
            final int[] rankOfTask) {
        final int tasks = hellos.length;
        final int parts = preferred.length;
        final int share = (parts + tasks - 1) / tasks;
        final int[] load = new int[tasks];
        final List<List<Integer>> out = new ArrayList<>();
        for (int t = 0; t < tasks; t++) {
            out.add(new ArrayList<>());
        }
        for (int p = 0; p < parts; p++) {
            int best = -1;
            final Integer rank = preferred[p] == null ? null : rankOf.get(preferred[p]);
            if (rank != null) {
                for (int t = 0; t < tasks; t++) {
                    if (rankOfTask[t] == rank && load[t] < share && (best < 0 || load[t] < load[best])) {
                        best = t;
                    }
                }
            }
            if (best < 0) {
                for (int t = 0; t < tasks; t++) {
                    if (best < 0 || load[t] < load[best]) {
                        best = t;
                    }
                }
            }
            out.get(best).add(p);
            load[best]++;
        }
        final int[][] a = new int[tasks][];
        for (int t = 0; t < tasks; t++) {
            a[t] = out.get(t).stream().mapToInt(Integer::intValue).toArray();
            Arrays.sort(a[t]);
        }
        return a;
    }
}
