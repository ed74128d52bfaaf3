package org.switchml.client;

/**
 * How long the calls of one worker socket waited for their first result, and so how long a call lets its first
 * timeout round wait for its own. Before a call's first result the wait is the other workers' lateness, not a loss:
 * in Spark the executors reach an aggregation apart by the skew of their tasks (and a stage's first call by the
 * skew of its tasks' start), and a timeout round before the late ones have sent does nothing but probe the switch
 * for their part, with a duplicate it drops. Kept per socket, not per session: a new stage's session meets the same
 * executors, and its first call would otherwise probe from the first timeout on.
 *
 * <p>The allowance only delays the recovery of a call none of whose first packets or results got through (any
 * result ends it), so it can be generous: twice the longest of the latest {@value #WINDOW} waits. Before any wait
 * is known (the socket's first call, as the executors still start) it is the timeout's ceiling.
 *
 * <p>Not thread-safe: the socket's event loop's.
 */
final class FirstResultWaits {
    /** How many recent calls' waits the allowance covers. */
    static final int WINDOW = 64;

    private final long[] recent = new long[WINDOW];
    private int count;
    private int next;

    /** A call's first result came {@code waitNs} after its start, and was not the answer to a probe. */
    void record(final long waitNs) {
        recent[next] = waitNs;
        next = (next + 1) % WINDOW;
        count = Math.min(WINDOW, count + 1);
    }

    /**
     * How long a call starting now lets its first timeout round wait: twice the longest recent wait, at most
     * {@code ceilingNs} (the retransmission timeout's ceiling, which is also the wait before any is known).
     */
    long allowanceNs(final long ceilingNs) {
        if (count == 0) {
            return ceilingNs;
        }
        long longest = 0;
        for (int i = 0; i < count; i++) {
            longest = Math.max(longest, recent[i]);
        }
        return Math.min(ceilingNs, 2 * longest);
    }
}
