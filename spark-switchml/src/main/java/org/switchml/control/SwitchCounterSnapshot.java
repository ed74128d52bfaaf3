package org.switchml.control;

import org.switchml.protocol.DropReason;

import java.util.EnumMap;
import java.util.Map;

/**
 * The switch-wide drop counter ({@code SwitchMLIngress.drop_reason}) as read over P4Runtime: cumulative
 * since the pipeline was committed, every job included.
 *
 * @param drops       drops by reason (index = {@link DropReason#ordinal()})
 * @param notSwitchml traffic that was not SwitchML at all (index {@code P4Names.NOT_SWITCHML_INDEX}, after
 *                    the last DropReason; only the P4 switch sees such frames)
 */
public record SwitchCounterSnapshot(Map<DropReason, Long> drops, long notSwitchml) {

    public SwitchCounterSnapshot {
        // EnumMap: reason order when printed.
        drops = java.util.Collections.unmodifiableMap(drops.isEmpty() ? new EnumMap<>(DropReason.class) : new EnumMap<>(drops));
    }

    /** Drops counted for {@code reason}. */
    public long drops(final DropReason reason) {
        return drops.getOrDefault(reason, 0L);
    }
}
