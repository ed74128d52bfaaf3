package org.switchml.protocol;

/** Counters that hold drops by reason ({@link JobCounters}, {@link SwitchCounters}). */
public interface CountsDrops {
    /** The drops by reason. */
    DropCounts drops();

    /** Drops counted for {@code reason}. */
    default long drops(final DropReason reason) {
        return drops().get(reason);
    }

    /** Drops of every reason. */
    default long totalDrops() {
        return drops().total();
    }
}
