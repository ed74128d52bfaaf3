package org.switchml.protocol;

import java.util.List;

/**
 * A job whose vector is split among several switches, the shards (docs/design.md, "Sharded aggregation"):
 * each shard is an ordinary switch with a registration of its own (job id, generation, secret, pool), and
 * owns a contiguous run of the vector's blocks in proportion to its weight. Every worker streams each run
 * to the shard that owns it and gets each run's result from that shard alone.
 *
 * <p>Shards split the vector on block boundaries, and a block's quantization depends only on its own
 * elements, the workers' exponents of that block and n (docs/protocol.md, section 5). So a sharded job
 * returns bit for bit what one switch returns for the same inputs, k and n, whatever the number of shards and
 * their weights. A job of one shard is an ordinary job.
 *
 * @param parts one per shard, in the order of the runs of blocks they own
 */
public record ShardedJob(List<Part> parts) {

    /**
     * One shard's registration of the job.
     *
     * @param dataplane where the shard listens
     * @param spec      the job as installed on that shard (its secret is that shard's registration's)
     * @param weight    the shard's share of the blocks, relative to the other parts' (0: none)
     */
    public record Part(SwitchAddress dataplane, JobSpec spec, int weight) {
        public Part {
            if (dataplane == null || spec == null) {
                throw new IllegalArgumentException("a shard needs a dataplane address and a job spec");
            }
            if (weight < 0) {
                throw new IllegalArgumentException(
                        "job " + spec.jobName() + " shard " + dataplane + ": weight must be >= 0, got " + weight);
            }
        }
    }

    public ShardedJob {
        parts = List.copyOf(parts);
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("a job needs at least one shard");
        }
        final JobSpec first = parts.get(0).spec();
        long total = 0;
        for (final Part p : parts) {
            // Every shard's job must have the same workers, ranks and k: the blocks, and so the bits, follow k and n.
            if (p.spec().k() != first.k() || !p.spec().workers().equals(first.workers())) {
                throw new IllegalArgumentException("job " + first.jobName() + ": every shard needs the same k and"
                        + " workers; shard " + p.dataplane() + " has k="
                        + p.spec().k() + " and workers "
                        + p.spec().workers() + ", shard " + parts.get(0).dataplane() + " k=" + first.k()
                        + " and workers " + first.workers());
            }
            total += p.weight();
        }
        if (total <= 0 || total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("job " + first.jobName() + ": the shards' weights must add up to"
                    + " 1.." + Integer.MAX_VALUE + ", got " + total);
        }
    }

    /** The scale of the integer weights of {@link #linkBalancedWeights}. */
    public static final int WEIGHT_SCALE = 1 << 20;

    /**
     * Weights that give every link the same load when {@code n} shards run on the workers' own hosts (data
     * hosts, listed first) and {@code extra} on hosts without data, every host behind a link of the same rate
     * (docs/design.md, "Placements"): each extra host owns {@code x = 2(n-1)/(n^2 + kn - 2k)} of the vector and
     * each data host {@code y = (1 - kx)/n}, so every link carries {@code n x V} each way, from {@code 2(n-1)/n V}
     * with no extra host (a ring's load) down to {@code V} with {@code n} of them (a switch's). With more extra
     * hosts than data hosts the extra hosts share the vector and the data hosts own none.
     */
    public static int[] linkBalancedWeights(final int n, final int extra) {
        if (n < 1 || extra < 0) {
            throw new IllegalArgumentException("shards need n >= 1 and extra >= 0, got n=" + n + ", extra=" + extra);
        }
        final int[] w = new int[n + extra];
        if (extra == 0) {
            java.util.Arrays.fill(w, 1);
            return w;
        }
        final double x = extra > n ? 1.0 / extra : 2.0 * (n - 1) / ((double) n * n + (double) extra * n - 2.0 * extra);
        final double y = Math.max(0, (1 - extra * x) / n);
        for (int i = 0; i < n; i++) {
            w[i] = (int) Math.round(y * WEIGHT_SCALE);
        }
        for (int i = n; i < n + extra; i++) {
            w[i] = Math.max(1, (int) Math.round(x * WEIGHT_SCALE));
        }
        return w;
    }

    /**
     * A pool per shard: {@code total} slots (what one switch would get) shared in proportion to {@code weights}, so
     * that a worker has about as much in flight as with one switch, and at least {@code min} per shard.
     */
    public static int[] pools(final int total, final int[] weights, final int min) {
        long sum = 0;
        for (final int w : weights) {
            sum += w;
        }
        final int[] out = new int[weights.length];
        for (int i = 0; i < weights.length; i++) {
            out[i] =
                    (int) Math.min(JobSpec.MAX_POOL_SIZE, Math.max(min, Math.round((double) total * weights[i] / sum)));
        }
        return out;
    }

    /** A job on one switch. */
    public static ShardedJob single(final SwitchAddress dataplane, final JobSpec spec) {
        return new ShardedJob(List.of(new Part(dataplane, spec, 1)));
    }

    /** Number of shards. */
    public int size() {
        return parts.size();
    }

    /** int32 elements per packet, the same on every shard. */
    public int k() {
        return parts.get(0).spec().k();
    }

    /** Number of workers n, the same on every shard. */
    public int numWorkers() {
        return parts.get(0).spec().numWorkers();
    }

    /**
     * Where each shard's run of {@code blocks} blocks starts: element {@code i} of the answer is the first
     * block of part {@code i}, and element {@link #size()} is {@code blocks}. Part {@code i} gets
     * {@code floor(blocks * W_i / W) - floor(blocks * W_(i-1) / W)} blocks, {@code W_i} being the weights of parts
     * 0..i and {@code W} all of them: every worker computes the same split from the same call.
     */
    public int[] blockStarts(final int blocks) {
        if (blocks < 0) {
            throw new IllegalArgumentException("blocks must be >= 0, got " + blocks);
        }
        long total = 0;
        for (final Part p : parts) {
            total += p.weight();
        }
        final int[] starts = new int[parts.size() + 1];
        long before = 0;
        for (int i = 0; i < parts.size(); i++) {
            starts[i] = (int) ((long) blocks * before / total);
            before += parts.get(i).weight();
        }
        starts[parts.size()] = blocks;
        return starts;
    }

    /** The job id of the first shard, for messages. */
    public String jobName() {
        return parts.get(0).spec().jobName();
    }

    /** The shards' dataplane addresses, for messages: {@code host:port[,port]; ...}. */
    public String shardNames() {
        final StringBuilder sb = new StringBuilder();
        for (final Part p : parts) {
            sb.append(sb.length() == 0 ? "" : "; ").append(p.dataplane());
        }
        return sb.toString();
    }
}
