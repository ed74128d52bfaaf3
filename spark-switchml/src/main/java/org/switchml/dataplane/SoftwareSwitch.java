package org.switchml.dataplane;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchMLException;
import org.switchml.transport.Transports;

/**
 * The embedded software switch: the SwitchML slot-pool algorithm (docs/protocol.md, section 4) over
 * real UDP sockets, one dataplane thread per lane. Needs no set-up beyond {@link #start}.
 *
 * <p>Jobs are installed with {@link #registerJob}; the change is applied by each lane's own thread, so
 * the packet path takes no locks. All methods are thread-safe.
 */
public final class SoftwareSwitch implements AutoCloseable {
    private static final long CONTROL_TIMEOUT_MS = 10_000;

    private final EventLoopGroup group;
    private final List<Channel> channels;
    private final List<Lane> lanes;
    private final SwitchAddress address;
    /** Serialises job changes; guards {@link #installed}. */
    private final Object control = new Object();

    private final Map<Integer, JobSpec> installed = new HashMap<>();

    private SoftwareSwitch(
            final EventLoopGroup group,
            final List<Channel> channels,
            final List<Lane> lanes,
            final SwitchAddress address) {
        this.group = group;
        this.channels = channels;
        this.lanes = lanes;
        this.address = address;
    }

    /** Binds every lane and starts serving. */
    public static SoftwareSwitch start(final SwitchOptions options) {
        final int n = options.ports().size();
        final EventLoopGroup group = Transports.newGroup(n, "switchml-lane");
        final List<Channel> channels = new ArrayList<>();
        final List<Lane> lanes = new ArrayList<>();
        final List<Integer> ports = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                final Lane lane = new Lane(
                        i,
                        n,
                        options.reflect(),
                        options.faults().withSeed(options.faults().seed() * 31 + i));
                final EventLoop loop = group.next();
                final Channel ch = Transports.datagram(loop, lane)
                        .bind(options.host(), options.ports().get(i))
                        .sync()
                        .channel();
                channels.add(ch);
                lanes.add(lane);
                ports.add(((InetSocketAddress) ch.localAddress()).getPort());
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new SwitchMLException("interrupted while binding the switch on " + options.host(), e);
        } catch (final Exception e) {
            // Netty's sync() rethrows the bind failure (an IOException) without declaring it.
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw new SwitchMLException(
                    "cannot bind the switch on " + options.host() + " ports " + options.ports() + ": " + e.getMessage(),
                    e);
        }
        return new SoftwareSwitch(group, channels, lanes, new SwitchAddress(options.host(), ports));
    }

    /** Where workers send contributions. */
    public SwitchAddress address() {
        return address;
    }

    /**
     * Installs {@code spec}: every slot of the job starts fresh, and from now on packets of another
     * registration (another generation or secret) are dropped.
     *
     * <p>A spec equal to the installed one is left as it is and this returns false: the registration is the
     * same, so its live sessions keep their slot state (resetting it under them could strand a worker whose
     * result was lost). A different spec with the installed job id, generation <em>and</em> secret is refused,
     * because packets could not tell the two registrations apart; a new registration needs a new secret (a
     * P4Runtime controller draws one every time) or a new generation.
     *
     * @return whether the job was (re)installed
     * @throws IllegalArgumentException another spec with the installed job's generation and secret
     */
    public boolean registerJob(final JobSpec spec) {
        synchronized (control) {
            final JobSpec current = installed.get(spec.jobId());
            if (spec.equals(current)) {
                return false;
            }
            if (spec.sameRegistration(current)) {
                throw new IllegalArgumentException("job " + spec.jobName() + " generation " + spec.generation()
                        + " is installed on switch " + address + " with the same secret but other parameters ("
                        + current + "); a new registration needs a new secret or generation");
            }
            onEveryLane(
                    lane -> {
                        lane.install(spec);
                        return null;
                    },
                    "register job " + spec.jobName());
            installed.put(spec.jobId(), spec);
            return true;
        }
    }

    /** Removes a job; returns whether it was installed. */
    public boolean removeJob(final int jobId) {
        synchronized (control) {
            boolean removed = false;
            for (final Boolean r :
                    onEveryLane(lane -> lane.remove(jobId), "remove job " + Integer.toUnsignedString(jobId))) {
                removed |= r;
            }
            installed.remove(jobId);
            return removed;
        }
    }

    /** A snapshot of the job's counters, or {@code null} when no such job is installed. */
    public JobCounters counters(final int jobId) {
        final List<JobCounters> perLane =
                onEveryLane(lane -> lane.counters(jobId), "read counters of job " + Integer.toUnsignedString(jobId));
        if (perLane.get(0) == null) {
            return null;
        }
        JobCounters sum = JobCounters.ZERO;
        for (final JobCounters c : perLane) {
            sum = sum.plus(c);
        }
        return sum;
    }

    /** Switch-wide counters: every datagram received, accepted or dropped by reason, all jobs included. */
    public SwitchTraffic traffic() {
        SwitchTraffic sum = SwitchTraffic.ZERO;
        for (final SwitchTraffic t : onEveryLane(Lane::traffic, "read switch counters")) {
            sum = sum.plus(t);
        }
        return sum;
    }

    private interface LaneTask<T> {
        T run(Lane lane);
    }

    /** Runs {@code task} on every lane's thread (so lane state is never shared) and waits, bounded. */
    private <T> List<T> onEveryLane(final LaneTask<T> task, final String what) {
        final List<Future<T>> futures = new ArrayList<>();
        for (int i = 0; i < lanes.size(); i++) {
            final Lane lane = lanes.get(i);
            final Callable<T> c = () -> task.run(lane);
            futures.add(channels.get(i).eventLoop().submit(c));
        }
        final List<T> out = new ArrayList<>();
        try {
            for (final Future<T> f : futures) {
                out.add(f.get(CONTROL_TIMEOUT_MS, TimeUnit.MILLISECONDS));
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted: " + what + " on switch " + address, e);
        } catch (final ExecutionException | TimeoutException e) {
            throw new SwitchMLException("cannot " + what + " on switch " + address + ": " + e, e);
        }
        return out;
    }

    /** Closes every lane socket and stops the dataplane threads. */
    @Override
    public void close() {
        for (final Channel ch : channels) {
            ch.close().awaitUninterruptibly(CONTROL_TIMEOUT_MS);
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(CONTROL_TIMEOUT_MS);
    }
}
