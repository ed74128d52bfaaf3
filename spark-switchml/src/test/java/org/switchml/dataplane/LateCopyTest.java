package org.switchml.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.switchml.protocol.Encoding;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Kind;
import org.switchml.protocol.Wire;

/**
 * A late copy of a worker's contribution (a network duplicate, or a retransmission overtaken by the
 * original) that arrives after the worker moved on to the slot's other set must be dropped: counted as a
 * new contributor it would push the count past n, corrupt the stored sum and clear the worker's bit in the
 * current set, stalling the job (docs/protocol.md section 4, "late copy of a finished use"). Found by the
 * benchmark's {@code --dup 0.01 --reorder 0.01} and by FaultToleranceTest's reordering case.
 */
class LateCopyTest {
    private static final int JOB = 7;
    private static final int SECRET = 0x5EC2E7;

    @Test
    void aLateCopyOfAnAnsweredContributionDoesNotStallTheSlot() throws Exception {
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                DatagramSocket w0 = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0));
                DatagramSocket w1 = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
            final DatagramSocket[] w = {w0, w1};
            w0.setSoTimeout(5_000);
            w1.setSoTimeout(5_000);
            final InetSocketAddress to = sw.address().laneAddresses().get(0);
            // n = 2, k = 1, one slot: packet g uses set g mod 2.
            sw.registerJob(new JobSpec(
                    JOB, 0, SECRET, 1, 1, List.of((InetSocketAddress) w0.getLocalSocketAddress(), (InetSocketAddress)
                            w1.getLocalSocketAddress())));

            send(w[0], to, 0, 0, 10);
            send(w[1], to, 1, 0, 20);
            assertEquals(30, receiveSum(w[0], 0));
            receiveSum(w[1], 0); // rank 1's copy of the result is "lost": read and dropped
            // Rank 0 moves on to g=1 ...
            send(w[0], to, 0, 1, 1);
            // ... and then a copy of its g=0 contribution, delayed in the network, arrives.
            send(w[0], to, 0, 0, 10);
            // Rank 1 retransmits g=0: the stored result must still answer it.
            send(w[1], to, 1, 0, 20);
            assertEquals(30, receiveSum(w[1], 0), "retransmission of g=0 answered with the stored sum");
            // Rank 1 contributes to g=1: the slot must complete.
            send(w[1], to, 1, 1, 2);
            assertEquals(3, receiveSum(w[1], 1), "g=1 completes");
            assertEquals(
                    1,
                    sw.counters(JOB).drops(org.switchml.protocol.DropReason.STALE_SEQ),
                    "the late copy is dropped as STALE_SEQ");
        }
    }

    private static void send(
            final DatagramSocket s, final InetSocketAddress to, final int rank, final int g, final int value)
            throws Exception {
        final ByteBuf b = Unpooled.buffer(Wire.datagramLength(1));
        Wire.writeHeader(
                b,
                0,
                Kind.CONTRIBUTION,
                Wire.setOf(g, 1),
                Encoding.INT32,
                1,
                JOB,
                0,
                rank,
                0,
                Wire.EXPONENT_NONE,
                g,
                SECRET);
        b.setInt(Wire.PAYLOAD_OFFSET, value);
        final byte[] a = new byte[Wire.datagramLength(1)];
        b.getBytes(0, a);
        s.send(new DatagramPacket(a, a.length, to));
    }

    /** The sum of the next result for packet g, or fails when none arrives within 5 s. */
    private static int receiveSum(final DatagramSocket s, final int g) throws Exception {
        final byte[] a = new byte[64];
        while (true) {
            final DatagramPacket p = new DatagramPacket(a, a.length);
            try {
                s.receive(p);
            } catch (final SocketTimeoutException e) {
                throw new AssertionError("no result for packet " + g + " within 5 s", e);
            }
            final ByteBuf b = Unpooled.wrappedBuffer(a, 0, p.getLength());
            if (Wire.seq(b, 0) == g) {
                return b.getInt(Wire.PAYLOAD_OFFSET);
            }
        }
    }
}
