package org.switchml.control;

/**
 * The switch resources of one job, allocated by the controller among live jobs: its slot range
 * {@code [poolBase, poolBase + poolSize)} in the pool shared by all jobs, its per-job counter index and
 * its multicast group. All three are unique among the jobs a controller has registered.
 *
 * @param jobIndex       per-job counter index, {@code 0 .. jobs-1}
 * @param poolBase       first pool slot of the job
 * @param poolSize       number of slots (the job's S)
 * @param multicastGroup multicast group id, {@code >= 1}
 */
public record JobResources(int jobIndex, int poolBase, int poolSize, int multicastGroup) {

    public JobResources {
        if (jobIndex < 0 || poolBase < 0 || poolSize < 1 || multicastGroup < 1) {
            throw new IllegalArgumentException("bad job resources: job index " + jobIndex + ", pool base " + poolBase
                    + ", pool size " + poolSize + ", multicast group " + multicastGroup);
        }
    }

    /** Whether the two slot ranges share a slot. */
    public boolean poolOverlaps(final JobResources other) {
        return poolBase < other.poolBase + other.poolSize && other.poolBase < poolBase + poolSize;
    }

    /** The slot range as {@code [a, b)}, for messages. */
    public String poolRange() {
        return "[" + poolBase + ", " + (poolBase + poolSize) + ")";
    }
}
