package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The loss-recovery policy on its own, without a socket: a clock of the test's, packets sent and answered at
 * chosen times, and the slots the policy sends again.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class RetransmissionTest {
    private static final long MS = 1_000_000;
    /** The retransmission timeout's ceiling of every call here. */
    private static final long CEILING = 500 * MS;

    /** A resend: which slot, and why. */
    private record Sent(int slot, boolean lossDetected) {}

    /**
     * A policy for {@code pool} slots on {@code lanes} lanes, first timeout 10 ms (ceiling 500), at time 0, on a
     * socket whose calls so far had their first result at once (no other worker late).
     */
    private static final class Bed {
        final LinkClock link;
        final List<Sent> resent = new ArrayList<>();
        final RttEstimator rtt;
        final FirstResultWaits waits;
        final Retransmission policy;
        long now;

        Bed(final int pool, final int lanes) {
            this(pool, lanes, punctualSocket());
        }

        /** The first call of a session on a socket whose calls waited {@code waits} for their first result. */
        Bed(final int pool, final int lanes, final FirstResultWaits waits) {
            this(pool, lanes, new LinkClock(), new RttEstimator(MS, 10 * MS, CEILING), waits, 0);
        }

        private Bed(
                final int pool,
                final int lanes,
                final LinkClock link,
                final RttEstimator rtt,
                final FirstResultWaits waits,
                final long start) {
            this.link = link;
            this.rtt = rtt;
            this.waits = waits;
            this.now = start;
            policy = new Retransmission(
                    pool, lanes, rtt, waits, link, (slot, loss) -> resent.add(new Sent(slot, loss)), start);
        }

        private static FirstResultWaits punctualSocket() {
            final FirstResultWaits w = new FirstResultWaits();
            w.record(0);
            return w;
        }

        /** The session's next call, on the same socket and round-trip estimate, starting now. */
        Bed nextCall(final int pool, final int lanes) {
            return new Bed(pool, lanes, link, rtt, waits, now);
        }

        /** A call whose other workers send {@code lateNs} after it starts: their results come then. */
        Bed lateCall(final long lateNs) {
            final Bed call = nextCall(4, 2);
            call.send(4, 8, 4);
            call.tickTo(call.now + lateNs);
            for (int slot = 0; slot < 4; slot++) {
                call.answer(slot);
            }
            return call;
        }

        /** Sends packets {@code from}..{@code to - 1} on slots {@code q mod pool}, 10 us apart from now on. */
        void send(final int from, final int to, final int pool) {
            for (int q = from; q < to; q++) {
                policy.sent(q % pool, q, now);
                now += 10_000;
            }
        }

        /** Advances the clock to {@code t} in timer ticks, each tick retransmitting as the client's timer would. */
        void tickTo(final long t) {
            while (now + Retransmission.TICK_NS <= t) {
                now += Retransmission.TICK_NS;
                if (policy.clockTicks(now)) {
                    policy.retransmit(now);
                }
            }
        }

        void answer(final int slot) {
            policy.answered(slot, now);
        }
    }

    @Test
    void aPacketOvertakenOnItsLaneIsSentAgainAfterARoundTripAndAQuarterNotBefore() {
        final Bed b = new Bed(8, 1);
        b.send(0, 8, 8);
        // Round trips of 4 ms: packets 1..7 answered, packet 0 (sent first) lost.
        b.tickTo(4 * MS);
        for (int slot = 1; slot < 8; slot++) {
            b.answer(slot);
        }
        assertTrue(b.resent.isEmpty(), "loss is presumed only once the overtaking result is a loss window old");
        b.tickTo(5 * MS); // 4 ms + a quarter: the loss window has passed
        assertEquals(List.of(new Sent(0, true)), b.resent);
        // Sent once more at most, until a later packet (sent after this copy) is answered.
        b.tickTo(8 * MS);
        assertEquals(
                1,
                b.resent.stream().filter(s -> s.slot() == 0 && s.lossDetected()).count());
    }

    @Test
    void aSilentWindowIsProbedOldestFirstAndAnAnsweredProbeLetsTheRestGo() {
        final Bed b = new Bed(4, 2);
        b.send(0, 4, 4); // slots 0, 2 on lane 0; slots 1, 3 on lane 1
        // Nothing answers: after the first timeout (10 ms) only the oldest packet of each lane goes again.
        b.tickTo(11 * MS);
        assertEquals(List.of(new Sent(0, false), new Sent(1, false)), b.resent);
        // The next round waits a timeout, then probes again (still silent): one packet per lane, the one whose
        // timeout started longest ago, so the window's packets take their turns.
        b.tickTo(19 * MS);
        assertEquals(2, b.resent.size(), "a round waits a timeout after the previous one");
        b.tickTo(21 * MS);
        assertEquals(
                List.of(new Sent(0, false), new Sent(1, false), new Sent(2, false), new Sent(3, false)),
                b.resent,
                "silence: one probe per lane and round");
        // The probe of lane 0 is answered: the path works, so the next round sends every packet still expired.
        b.answer(0);
        final int before = b.resent.size();
        b.tickTo(60 * MS);
        assertTrue(
                b.resent
                        .subList(before, b.resent.size())
                        .containsAll(List.of(new Sent(2, false), new Sent(3, false), new Sent(1, false))),
                "after an answered probe every expired packet: " + b.resent);
    }

    /**
     * In Spark the executors reach an aggregation apart: a call waits for the late ones' first contribution, and
     * nothing was lost. A call that knows no better probes; one after calls as late sends nothing again; a first
     * packet lost in a later call is still sent again by its timeout, and a call lost whole once the learned wait
     * has passed.
     */
    @Test
    void aCallWaitingForLateWorkersAsRecentCallsDidSendsNothingAgain() {
        final Bed first = new Bed(4, 2); // on a socket whose calls had their results at once
        first.send(0, 4, 4);
        first.tickTo(30 * MS); // the other workers send 30 ms late
        assertTrue(!first.resent.isEmpty(), "a call that knows no better probes (positive control)");
        first.tickTo(31 * MS);
        for (int slot = 0; slot < 4; slot++) {
            first.answer(slot);
        }
        final Bed second = first.lateCall(55 * MS); // later still, but within twice the longest wait
        assertTrue(second.resent.isEmpty(), "a wait within twice the last ones' is probed: " + second.resent);
        // The next call's first packet is lost while the others are on time: their results come at 2 ms, and
        // packet 8's loss is found by the timeout, not a learned 110 ms later.
        final Bed third = second.nextCall(4, 2);
        final long start = third.now;
        third.send(8, 12, 4);
        third.tickTo(start + 2 * MS);
        for (int slot = 1; slot < 4; slot++) {
            third.answer(slot);
        }
        third.tickTo(start + 30 * MS);
        assertEquals(
                List.of(8 % 4), third.resent.stream().map(Sent::slot).distinct().toList(), third.resent.toString());
        // And when every packet of a call is lost, the learned wait bounds the recovery: probes by then.
        final Bed fourth = third.nextCall(4, 2);
        final long start4 = fourth.now;
        for (int slot = 0; slot < 4; slot++) {
            if (fourth.policy.outstanding(slot) < 0) {
                fourth.policy.sent(slot, 12 + slot, fourth.now);
            }
        }
        final long learned = fourth.waits.allowanceNs(CEILING);
        assertEquals(110 * MS, learned, 2 * MS, "twice the longest recent wait");
        fourth.tickTo(start4 + learned - MS);
        assertTrue(fourth.resent.isEmpty(), "sent again within the learned wait: " + fourth.resent);
        fourth.tickTo(start4 + learned + fourth.rtt.rtoNs() + 2 * MS);
        assertTrue(!fourth.resent.isEmpty(), "nothing sent again within the learned wait and a timeout");
    }

    /**
     * A socket's first call waits for the others to start (up to the ceiling), and a new session on the socket
     * starts from what the socket's calls learned, not from scratch: a new stage's tasks start apart too.
     */
    @Test
    void theSocketsFirstCallWaitsForTheOthersToStartAndNewSessionsKeepWhatItLearned() {
        final Bed first = new Bed(4, 2, new FirstResultWaits());
        first.send(0, 4, 4);
        first.tickTo(400 * MS); // an executor still starting
        assertTrue(first.resent.isEmpty(), "the socket's first call probed: " + first.resent);
        first.tickTo(501 * MS + first.rtt.rtoNs());
        assertTrue(!first.resent.isEmpty(), "past the ceiling the first call probes (positive control)");
        for (int slot = 0; slot < 4; slot++) {
            first.answer(slot);
        }
        final Bed learned = new Bed(4, 2, first.waits); // a new session (fresh round trips) on the same socket
        learned.send(0, 4, 4);
        learned.tickTo(450 * MS);
        assertTrue(learned.resent.isEmpty(), "a new session forgot the socket's waits: " + learned.resent);
    }

    /**
     * A result that comes right after a probe answers the probe (the call's first packets were lost): it teaches
     * nothing about late workers, so a loss does not lengthen the next calls' wait; a result long after the probe
     * does (positive control).
     */
    @Test
    void aResultAnsweringAProbeIsNotLearnedAsLateness() {
        final Bed lost = new Bed(4, 2); // learned: no one is late
        lost.send(0, 4, 4);
        lost.tickTo(11 * MS); // probes at the 10 ms timeout
        assertEquals(List.of(new Sent(0, false), new Sent(1, false)), lost.resent, "the lost window was probed");
        lost.answer(0); // right after the probe: the path works, and the rest of the window goes again
        lost.answer(1);
        lost.tickTo(22 * MS); // a timeout after the probes were answered
        assertEquals(4, lost.resent.size(), lost.resent.toString());
        lost.answer(2);
        lost.answer(3);
        assertEquals(0, lost.waits.allowanceNs(CEILING), "a lost window was learned as lateness");
        final Bed late = lost.nextCall(4, 2);
        late.send(4, 8, 4);
        late.tickTo(late.now + 45 * MS); // probed at 10, 20 and 40 ms; the late workers come at 45
        assertTrue(!late.resent.isEmpty(), "probed while the others were late");
        for (int slot = 0; slot < 4; slot++) {
            late.answer(slot);
        }
        assertEquals(90 * MS, late.waits.allowanceNs(CEILING), 2 * MS, "lateness long after a probe is learned");
    }

    /** The learned wait covers the latest calls only: one very late call is forgotten after the window. */
    @Test
    void theLearnedWaitForgetsALateCallAfterTheWindow() {
        Bed call = new Bed(4, 2).lateCall(100 * MS);
        assertEquals(200 * MS, call.waits.allowanceNs(CEILING), 2 * MS);
        for (int i = 0; i < FirstResultWaits.WINDOW - 1; i++) {
            call = call.lateCall(5 * MS);
        }
        assertEquals(200 * MS, call.waits.allowanceNs(CEILING), 2 * MS, "forgot within the window");
        call = call.lateCall(5 * MS);
        assertEquals(10 * MS, call.waits.allowanceNs(CEILING), 2 * MS, "still waits for a call out of the window");
    }

    @Test
    void whileResultsComeEveryExpiredPacketIsSentAgain() {
        final Bed b = new Bed(6, 1);
        b.send(0, 6, 6);
        b.tickTo(2 * MS);
        // Slots 0..2 answered at their first transmission; 3..5 then wait behind them and are lost.
        for (int slot = 0; slot < 3; slot++) {
            b.answer(slot);
        }
        // Loss detection does not see 3..5: nothing sent after them was answered. The timeout does, a timeout
        // after the last result, while results came within it: all three go at once.
        b.tickTo(30 * MS);
        final List<Integer> slots =
                b.resent.stream().map(Sent::slot).distinct().sorted().toList();
        assertEquals(List.of(3, 4, 5), slots, b.resent.toString());
        assertTrue(b.resent.stream().noneMatch(Sent::lossDetected));
    }

    @Test
    void aPacketQueuedBehindOneAnsweredLaterIsNotTimedOutFromItsOwnTransmission() {
        final Bed b = new Bed(2, 1);
        // A first round trip of 2 ms makes the timeout small: srtt 2 ms, timeout 3 ms.
        b.send(0, 1, 2);
        b.tickTo(2 * MS);
        b.answer(0);
        b.send(2, 3, 2); // slot 0 again
        b.send(1, 2, 2); // slot 1, entered the link after packet 2
        // Packet 2 is answered 2.5 ms later: packet 1 waited behind it, so its timeout starts again then.
        b.tickTo(4 * MS);
        b.answer(0);
        final long answered = b.now;
        // The timeout is now about 5 ms (srtt 2 ms, small deviation): from packet 1's own transmission it would
        // have expired before the answer plus 3 ms; it starts again at the answer instead.
        b.tickTo(answered + 3 * MS);
        assertTrue(b.resent.isEmpty(), "timed out while only queued: " + b.resent);
        final long rto = b.rtt.rtoNs();
        b.tickTo(answered + rto - MS);
        assertTrue(b.resent.isEmpty(), "timed out before a timeout after the restart: " + b.resent);
        b.tickTo(answered + rto + MS);
        assertEquals(List.of(new Sent(1, false)), b.resent, "it times out a timeout after the restart");
    }

    @Test
    void aTimerThatRanLateTimesNothingOutForTheStall() {
        final Bed b = new Bed(2, 1);
        b.send(0, 2, 2);
        b.tickTo(2 * MS);
        // The thread stood still for 200 ms: the next tick comes late.
        b.now += 200 * MS;
        assertEquals(false, b.policy.clockTicks(b.now), "a late tick is a stall");
        b.policy.retransmit(b.now);
        assertTrue(b.resent.isEmpty(), "the stall is not a timeout: " + b.resent);
        // The clock runs on: the packets time out 10 ms (the first timeout) after their transmission, shifted by
        // the stall less one tick.
        b.tickTo(b.now + 6 * MS);
        assertTrue(b.resent.isEmpty(), b.resent.toString());
        b.tickTo(b.now + 3 * MS);
        assertEquals(List.of(new Sent(0, false)), b.resent, "then the oldest is probed");
    }

    @Test
    void silenceDoublesTheGapBetweenProbes() {
        final Bed b = new Bed(1, 1);
        b.send(0, 1, 1);
        final List<Long> at = new ArrayList<>();
        for (long t = 0; t < 400 * MS; t += Retransmission.TICK_NS) {
            final int before = b.resent.size();
            b.tickTo(t);
            if (b.resent.size() > before) {
                at.add(b.now / MS);
            }
        }
        // First timeout 10 ms, then 10 (the first silent round does not count), 20, 40, 80, 160 ms apart.
        assertEquals(List.of(10L, 20L, 40L, 80L, 160L, 320L), at);
        assertEquals(1, b.policy.oldestOutstanding() + 1, "packet 0 is still outstanding");
    }
}
