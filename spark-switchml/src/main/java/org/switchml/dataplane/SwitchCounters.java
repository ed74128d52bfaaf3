package org.switchml.dataplane;

import org.switchml.protocol.DropReason;

import java.util.EnumMap;
import java.util.Map;

/**
 * Switch-wide counters, summed over the lanes and cumulative since the switch started: they outlive the
 * jobs they counted. Every datagram a lane receives ends up in exactly one place, so
 * {@code received == accepted + totalDrops() + errors}.
 *
 * @param received datagrams the lanes received (whatever they were)
 * @param accepted contributions that were aggregated, completed a slot or were answered with a stored
 *                 result (every datagram, in reflector mode)
 * @param drops    drops by reason, every job included: MALFORMED and UNKNOWN_JOB are counted only here
 * @param errors   datagrams whose handling raised (a bug; the dataplane keeps serving)
 */
public record SwitchCounters(long received, long accepted, Map<DropReason, Long> drops, long errors) {

    public SwitchCounters {
        final Map<DropReason, Long> all = new EnumMap<>(DropReason.class);
        for (final DropReason r : DropReason.values()) {
            all.put(r, drops.getOrDefault(r, 0L));
        }
        drops = java.util.Collections.unmodifiableMap(all);
    }

    /** All zeros. */
    public static final SwitchCounters ZERO = new SwitchCounters(0, 0, Map.of(), 0);

    /** Drops counted for {@code reason}. */
    public long drops(final DropReason reason) {
        return drops.get(reason);
    }

    /** Datagrams dropped as MALFORMED. */
    public long malformed() {
        return drops(DropReason.MALFORMED);
    }

    /** Datagrams dropped as UNKNOWN_JOB. */
    public long unknownJob() {
        return drops(DropReason.UNKNOWN_JOB);
    }

    /** Drops of every reason. */
    public long totalDrops() {
        long t = 0;
        for (final long d : drops.values()) {
            t += d;
        }
        return t;
    }

    /** Whether every received datagram is accounted for as accepted, dropped or an error. */
    public boolean balanced() {
        return received == accepted + totalDrops() + errors;
    }
}
