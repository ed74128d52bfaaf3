package org.switchml.client;

/**
 * The link one worker socket's calls share, as loss recovery sees it: the order in which datagrams entered it and
 * its latest result of any call. Not thread-safe: the socket's event loop's.
 */
final class LinkClock implements Retransmission.Link {
    /** Datagrams of every call this socket sent so far. */
    private long txCount;
    /** When the latest result came, and the transmission count of what it answered (-1: none yet). */
    private long lastAnswerNs;

    private long lastAnsweredTx = -1;

    @Override
    public long nextTx() {
        return txCount++;
    }

    @Override
    public void answered(final long firstTx, final long now) {
        lastAnswerNs = now;
        lastAnsweredTx = firstTx;
    }

    @Override
    public long lastAnsweredTx() {
        return lastAnsweredTx;
    }

    @Override
    public long lastAnswerNs() {
        return lastAnswerNs;
    }

    /** The thread stood still for {@code ns}: so did the results, which must not look late for it. */
    void stalled(final long ns) {
        lastAnswerNs += ns;
    }
}
