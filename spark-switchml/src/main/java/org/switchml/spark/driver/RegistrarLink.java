package org.switchml.spark.driver;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.SwitchAddress;
import org.switchml.spark.registrar.JobRegistrar;

/**
 * The driver's link to the switch's control plane: the registrar while the switch answers, and why not
 * while it does not. A switch that cannot be reached is tried again, at most every two seconds, when a
 * call needs it; until then {@code spark.switchml.fallback} applies.
 */
final class RegistrarLink implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RegistrarLink.class);
    /** How often an unreachable switch is tried again, at most. */
    private static final long RETRY_UNREACHABLE_NS = TimeUnit.SECONDS.toNanos(2);

    private final Supplier<JobRegistrar> factory;
    private final String what;
    private final SwitchAddress configuredAddress;
    private volatile JobRegistrar registrar;
    private volatile String unreachable;
    private volatile boolean closed;
    private long lastAttemptNs;

    /**
     * @param factory           opens the registrar; throws when the switch cannot be reached
     * @param what              what is tried, for messages ("the P4Runtime server ... of switch ...")
     * @param configuredAddress the switch's dataplane address when known before it answers, else null
     */
    RegistrarLink(final Supplier<JobRegistrar> factory, final String what, final SwitchAddress configuredAddress) {
        this.factory = factory;
        this.what = what;
        this.configuredAddress = configuredAddress;
        connect();
    }

    /** Tries the registrar once; remembers why it failed. */
    private synchronized void connect() {
        lastAttemptNs = System.nanoTime();
        try {
            registrar = factory.get();
            unreachable = null;
        } catch (final RuntimeException e) {
            registrar = null;
            unreachable = e.getMessage() == null ? e.toString() : e.getMessage();
        }
    }

    /** The registrar as last connected, without trying again; null while the switch is unreachable. */
    JobRegistrar current() {
        return registrar;
    }

    /**
     * The registrar, reconnecting (at most every two seconds) when the switch was unreachable; null with
     * {@link #unreachableReason()} set when it still is.
     */
    JobRegistrar available() {
        final JobRegistrar r = registrar;
        if (r != null || closed) {
            return r;
        }
        synchronized (this) {
            if (registrar == null && System.nanoTime() - lastAttemptNs > RETRY_UNREACHABLE_NS) {
                connect();
                if (registrar != null) {
                    LOG.info("spark-switchml: {} answers again", what);
                }
            }
            return registrar;
        }
    }

    /** Why the switch is unreachable (what was tried and what happened), or null when it is up. */
    String unreachableReason() {
        return registrar == null ? what + ": " + unreachable : null;
    }

    /** Marks {@code r} as lost after a failure, so that the next call reconnects. */
    synchronized void lost(final JobRegistrar r, final String reason) {
        if (registrar == r && r != null) {
            registrar = null;
            unreachable = reason;
            lastAttemptNs = System.nanoTime();
            try {
                r.close();
            } catch (final RuntimeException e) {
                LOG.debug("spark-switchml: closing the lost registrar: {}", e.toString());
            }
        }
    }

    /** The switch's dataplane address (the configured one while an external switch is unreachable). */
    SwitchAddress switchAddress() {
        final JobRegistrar r = registrar;
        return r != null ? r.address() : configuredAddress;
    }

    /** Human-readable name of the switch, for messages. */
    String switchName() {
        final SwitchAddress a = switchAddress();
        return a != null ? a.toString() : what;
    }

    @Override
    public void close() {
        closed = true;
        final JobRegistrar r = registrar;
        if (r != null) {
            r.close();
        }
    }
}
