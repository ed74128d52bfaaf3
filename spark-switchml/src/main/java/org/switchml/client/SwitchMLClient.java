package org.switchml.client;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.ShardedJob;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchMLException;
import org.switchml.protocol.Wire;
import org.switchml.transport.PacketSender;
import org.switchml.transport.Transports;

/**
 * One worker's endpoint: a UDP socket through which it allreduces vectors with the other workers of a
 * job, via a switch. Open it first (its {@link #localAddress()} goes into the {@link JobSpec}), then
 * {@link #join} the job once the switch knows it.
 *
 * <p>All protocol state lives on the socket's event loop thread; the public methods hand work to it.
 */
public final class SwitchMLClient implements AutoCloseable {
    private static final Object SHARED_LOCK = new Object();
    private static EventLoopGroup shared;

    private final ClientOptions options;
    private final Channel channel;
    private final Handler handler;
    private final InetSocketAddress local;
    /**
     * Registrations (job id, generation, secret) this client has joined; each admits one session. A
     * long-lived worker (one per Spark executor) joins a job per stage, so only the most recent
     * {@value #JOINED_KEPT} are kept; an older one is long gone from the switch.
     */
    private static final int JOINED_KEPT = 1 << 16;

    private final Set<List<Object>> joined = Collections.newSetFromMap(new LinkedHashMap<List<Object>, Boolean>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(final Map.Entry<List<Object>, Boolean> e) {
            return size() > JOINED_KEPT;
        }
    });

    private SwitchMLClient(final ClientOptions options, final Channel channel, final Handler handler) {
        this.options = options;
        this.channel = channel;
        this.handler = handler;
        this.local = (InetSocketAddress) channel.localAddress();
    }

    /** Binds a worker socket on a shared, daemon event loop group. */
    public static SwitchMLClient open(final ClientOptions options) {
        return open(options, sharedGroup());
    }

    /** Binds a worker socket on a loop of {@code group}. */
    public static SwitchMLClient open(final ClientOptions options, final EventLoopGroup group) {
        final EventLoop loop = group.next();
        final Handler handler = new Handler(options);
        try {
            final Channel ch = Transports.datagram(loop, handler)
                    .bind(options.bindHost(), options.bindPort())
                    .sync()
                    .channel();
            return new SwitchMLClient(options, ch, handler);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted while binding a worker socket on " + options.bindHost(), e);
        } catch (final Exception e) {
            // Netty's sync() rethrows the bind failure (an IOException) without declaring it.
            throw new SwitchMLException(
                    "cannot bind a worker socket on " + options.bindHost() + ":" + options.bindPort() + ": "
                            + e.getMessage(),
                    e);
        }
    }

    private static EventLoopGroup sharedGroup() {
        synchronized (SHARED_LOCK) {
            if (shared == null) {
                shared =
                        Transports.newGroup(Math.max(2, Runtime.getRuntime().availableProcessors()), "switchml-worker");
            }
            return shared;
        }
    }

    /** The address the switch must know for this worker. */
    public InetSocketAddress localAddress() {
        return local;
    }

    public ClientOptions options() {
        return options;
    }

    /**
     * Takes part in {@code spec} as {@code rank}, talking to the switch at {@code switchAddress}, with the
     * result timeout of this client's options. The switch must already have the job registered.
     *
     * <p>A registration (job id, generation, secret) admits one session per worker: the switch keeps the
     * slot state of the session's calls, and a second session that started numbering its packets afresh
     * would be answered with the first one's results. So a second join of the same registration on this
     * client is refused; register the job again (a controller draws a new secret every time) and join the
     * spec that registration returned.
     *
     * @throws IllegalArgumentException the rank is outside the job or registered at another endpoint
     * @throws IllegalStateException    this client already joined this registration
     */
    public JobSession join(final JobSpec spec, final int rank, final SwitchAddress switchAddress) {
        return join(spec, rank, switchAddress, options.resultTimeoutMs());
    }

    /**
     * Takes part in {@code spec} as {@code rank}, talking to the switch at {@code switchAddress}; a call of
     * this session fails when no result arrives for {@code resultTimeoutMs}. One socket may take part in
     * several jobs at once (one call per job at a time): results are routed by job id.
     */
    public JobSession join(
            final JobSpec spec, final int rank, final SwitchAddress switchAddress, final long resultTimeoutMs) {
        if (resultTimeoutMs < 1) {
            throw new IllegalArgumentException(
                    "job " + spec.jobName() + ": result timeout must be >= 1 ms, got " + resultTimeoutMs);
        }
        if (rank < 0 || rank >= spec.numWorkers()) {
            throw new IllegalArgumentException(
                    "job " + spec.jobName() + ": rank " + rank + " outside 0.." + (spec.numWorkers() - 1));
        }
        if (!spec.workers().get(rank).equals(local)) {
            throw new IllegalArgumentException("job " + spec.jobName() + ": rank " + rank + " is registered at "
                    + spec.workers().get(rank) + " but this worker's socket is " + local);
        }
        synchronized (joined) {
            if (!joined.add(List.of(spec.jobId(), spec.generation(), spec.secret(), switchAddress.toString()))) {
                throw new IllegalStateException("job " + spec.jobName() + " generation " + spec.generation()
                        + ": worker " + local + " already joined this registration of the job; the switch still holds "
                        + "that session's slot state, so a second session would be answered with its results. "
                        + "Register the job again (a new registration has a new secret) and join the spec it returns");
            }
        }
        return new JobSession(this, spec, rank, switchAddress, resultTimeoutMs);
    }

    /**
     * Takes part in the sharded {@code job} as {@code rank}: joins every shard's registration of it (see
     * {@link #join(JobSpec, int, SwitchAddress, long)}); a call fails when a shard gives no result for
     * {@code resultTimeoutMs}. The shards may share a job id: results are routed by job id and by the shard
     * (address and lane port) that sent them.
     *
     * @throws IllegalArgumentException the rank is outside the job or registered at another endpoint
     * @throws IllegalStateException    this client already joined one of the shards' registrations
     */
    public ShardedSession join(final ShardedJob job, final int rank, final long resultTimeoutMs) {
        final List<JobSession> parts = new ArrayList<>(job.size());
        for (final ShardedJob.Part p : job.parts()) {
            parts.add(join(p.spec(), rank, p.dataplane(), resultTimeoutMs));
        }
        return new ShardedSession(this, job, rank, parts, resultTimeoutMs);
    }

    /** Counters of this worker socket. */
    public ClientStats stats() {
        return call(() -> new ClientStats(
                handler.sender.sent(),
                handler.retransmissions,
                handler.lossDetected,
                handler.accepted,
                handler.dropped,
                handler.fromUnknownSender,
                handler.withBadSecret,
                handler.ofOtherGeneration));
    }

    EventLoop loop() {
        return channel.eventLoop();
    }

    Handler handler() {
        return handler;
    }

    ByteBuf allocate(final int bytes) {
        return channel.alloc().directBuffer(bytes);
    }

    private <T> T call(final Callable<T> c) {
        try {
            return loop().submit(c).get(10, TimeUnit.SECONDS);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted", e);
        } catch (final ExecutionException | TimeoutException e) {
            throw new SwitchMLException("worker " + local + ": event loop did not answer: " + e, e);
        }
    }

    /** Closes the socket. An operation still running fails. */
    @Override
    public void close() {
        loop().execute(() -> handler.failAll("the worker socket was closed during the call"));
        channel.close().awaitUninterruptibly(10_000);
    }

    /** The socket's handler: routes results to the operation in progress. Event-loop confined. */
    static final class Handler extends ChannelInboundHandlerAdapter {
        private final ClientOptions options;
        PacketSender sender;
        /**
         * The running operations of each job (event-loop confined): one, or one per shard of a sharded job whose
         * shards share its id.
         */
        private final Map<Integer, List<AllReduceOperation>> active = new HashMap<>();

        private long retransmissions;
        /** Retransmissions of packets presumed lost because later ones were answered (no timeout). */
        private long lossDetected;

        long accepted;
        /** Every datagram that completed nothing, the three kinds below included. */
        long dropped;

        long fromUnknownSender;
        long withBadSecret;
        long ofOtherGeneration;

        Handler(final ClientOptions options) {
            this.options = options;
        }

        /** Whether an operation of job {@code jobId} with the same switch as {@code op} is running on this socket. */
        boolean running(final int jobId, final AllReduceOperation op) {
            final List<AllReduceOperation> ops = active.get(jobId);
            if (ops != null) {
                for (final AllReduceOperation o : ops) {
                    if (o.sameSwitch(op)) {
                        return true;
                    }
                }
            }
            return false;
        }

        /** Routes job {@code jobId}'s results from {@code op}'s switch to {@code op} from now on. */
        void activate(final int jobId, final AllReduceOperation op) {
            active.computeIfAbsent(jobId, id -> new ArrayList<>(1)).add(op);
        }

        /** Stops routing job {@code jobId}'s results to {@code op} (if they still go to it). */
        void deactivate(final int jobId, final AllReduceOperation op) {
            final List<AllReduceOperation> ops = active.get(jobId);
            if (ops != null && ops.remove(op) && ops.isEmpty()) {
                active.remove(jobId);
            }
        }

        /**
         * The calls whose retransmission timer runs: one timer for the socket ticks them all (a sharded call has an
         * operation per shard, and a timer each would wake the event loop that many times more often).
         */
        private final List<AllReduceOperation> ticking = new ArrayList<>();

        private ScheduledFuture<?> ticker;

        /** Starts ticking {@code op} every {@link AllReduceOperation#TICK_NS} (event loop only). */
        void startTicking(final AllReduceOperation op) {
            ticking.add(op);
            if (ticker == null) {
                lastTickAllNs = System.nanoTime();
                ticker = loop.scheduleAtFixedRate(
                        this::tickAll, Retransmission.TICK_NS, Retransmission.TICK_NS, TimeUnit.NANOSECONDS);
            }
        }

        /** Stops ticking {@code op}; the timer stops with the last call (event loop only). */
        void stopTicking(final AllReduceOperation op) {
            if (ticking.remove(op) && ticking.isEmpty() && ticker != null) {
                ticker.cancel(false);
                ticker = null;
            }
        }

        private long lastTickAllNs = System.nanoTime();

        private void tickAll() {
            final long now = System.nanoTime();
            final long gap = now - lastTickAllNs;
            lastTickAllNs = now;
            if (gap > Retransmission.STALL_NS) {
                // The thread stood still (each call times out nothing for the stall either): so did the results.
                link.stalled(gap - Retransmission.TICK_NS);
            }
            // A tick may end its call (and remove it from the list): tick a copy.
            for (final AllReduceOperation op : ticking.toArray(new AllReduceOperation[0])) {
                op.tick();
            }
        }

        /** The link this socket's calls share (loss recovery's order and latest result). */
        final LinkClock link = new LinkClock();

        /** How long this socket's calls waited for their first result (the other workers' lateness). */
        final FirstResultWaits firstResultWaits = new FirstResultWaits();

        /** Counts a packet sent again after its retransmission timeout. */
        void countTimeoutRetransmission() {
            retransmissions++;
        }

        /** Counts a packet sent again because packets sent after it were answered (no timeout). */
        void countLossDetectedRetransmission() {
            retransmissions++;
            lossDetected++;
        }

        /** Retransmissions counted so far, both kinds. */
        long retransmissions() {
            return retransmissions;
        }

        private EventLoop loop;

        @Override
        public void channelActive(final ChannelHandlerContext ctx) {
            loop = ctx.channel().eventLoop();
            sender = new PacketSender(ctx.channel(), options.faults());
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(final ChannelHandlerContext ctx, final Object msg) {
            try {
                count(route(msg));
            } catch (final RuntimeException e) {
                // Checking a datagram changes no call's state (a call fails itself when using an accepted
                // result goes wrong), so one that cannot be checked is junk like any other: dropped and
                // counted, and every call goes on.
                count(ResultOutcome.IGNORED);
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        /** Hands {@code msg} to the running operation of its job, if any. */
        private ResultOutcome route(final Object msg) {
            if (!(msg instanceof DatagramPacket packet)) {
                return ResultOutcome.IGNORED;
            }
            final ByteBuf buf = packet.content();
            if (buf.readableBytes() < Wire.HEADER_LENGTH) {
                return ResultOutcome.IGNORED;
            }
            final List<AllReduceOperation> ops = active.get(Wire.jobId(buf, buf.readerIndex()));
            if (ops == null) {
                return ResultOutcome.IGNORED;
            }
            if (ops.size() == 1) {
                return ops.get(0).onResult(buf, buf.readerIndex(), buf.readableBytes(), packet.sender());
            }
            // Shards of one job: the result belongs to the operation whose shard sent it (the receive rule's
            // sender check, which that operation repeats).
            for (int i = 0; i < ops.size(); i++) {
                final AllReduceOperation op = ops.get(i);
                if (op.fromItsSwitch(buf, buf.readerIndex(), packet.sender())) {
                    return op.onResult(buf, buf.readerIndex(), buf.readableBytes(), packet.sender());
                }
            }
            return ResultOutcome.UNKNOWN_SENDER;
        }

        private void count(final ResultOutcome outcome) {
            switch (outcome) {
                case ACCEPTED -> accepted++;
                case UNKNOWN_SENDER -> fromUnknownSender++;
                case BAD_SECRET -> withBadSecret++;
                case OTHER_GENERATION -> ofOtherGeneration++;
                case IGNORED -> {}
            }
            if (outcome != ResultOutcome.ACCEPTED) {
                dropped++;
            }
        }

        @Override
        public void channelReadComplete(final ChannelHandlerContext ctx) {
            sender.flush();
        }

        @Override
        public void exceptionCaught(final ChannelHandlerContext ctx, final Throwable cause) {
            // ICMP port unreachable and the like: retransmission and the result timeout handle them.
        }

        /** Fails every running operation, each with an error naming its job, rank and worker, and {@code why}. */
        void failAll(final String why) {
            final List<AllReduceOperation> all = new ArrayList<>();
            for (final List<AllReduceOperation> ops : active.values()) {
                all.addAll(ops);
            }
            for (final AllReduceOperation op : all) {
                op.abort(why);
            }
        }
    }
}
