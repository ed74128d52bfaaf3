package org.switchml.dataplane;

import org.switchml.protocol.DropReason;
import org.switchml.protocol.SwitchCounters;

/**
 * Everything the software switch counts switch-wide, summed over the lanes and cumulative since the
 * switch started: the switch counters a P4 switch also keeps, plus what only a software switch can
 * count. Every datagram a lane receives ends up in exactly one place, so
 * {@code received == accepted + counters.totalDrops() + errors}.
 *
 * @param received datagrams the lanes received (whatever they were)
 * @param accepted contributions that were aggregated, completed a slot or were answered with a stored
 *                 result (every datagram, in reflector mode)
 * @param counters drops by reason, every job included (notSwitchml is 0: a lane's socket gets only UDP
 *                 to its port, and anything there that is not SwitchML is MALFORMED)
 * @param errors   datagrams whose handling raised (a bug; the dataplane keeps serving)
 */
public record SwitchTraffic(long received, long accepted, SwitchCounters counters, long errors) {
    /** Nothing counted. */
    public static final SwitchTraffic ZERO = new SwitchTraffic(0, 0, SwitchCounters.ZERO, 0);

    /** Drops counted for {@code reason}. */
    public long drops(final DropReason reason) {
        return counters.drops(reason);
    }

    /** Every count plus {@code other}'s (over lanes). */
    SwitchTraffic plus(final SwitchTraffic other) {
        return new SwitchTraffic(
                received + other.received,
                accepted + other.accepted,
                counters.plus(other.counters),
                errors + other.errors);
    }

    /** Whether every received datagram is accounted for as accepted, dropped or an error. */
    public boolean balanced() {
        return received == accepted + counters.totalDrops() + errors;
    }
}
