package org.switchml.service;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.switchml.protocol.DropCounts;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchCounters;
import org.switchml.service.v1.Endpoint;
import org.switchml.service.v1.JobSpecMessage;
import org.switchml.service.v1.ReadJobCountersResponse;
import org.switchml.service.v1.SwitchInfo;
import org.switchml.service.v1.Traffic;

/** Conversions between the job service's messages and the library's types. */
final class Messages {
    private Messages() {}

    static SwitchInfo switchInfo(final SwitchDescription d) {
        return SwitchInfo.newBuilder()
                .setDataplaneHost(d.dataplane().host())
                .addAllDataplanePorts(d.dataplane().lanePorts())
                .setRequiredK(d.requiredK())
                .setMaxWorkers(d.maxWorkers())
                .setDataplaneMtu(d.mtu())
                .setCountsJobs(d.countsJobs())
                .setPoolSlots(d.poolSlots())
                .setJobIndices(d.jobIndices())
                .build();
    }

    static SwitchDescription switchDescription(final SwitchInfo i) {
        return new SwitchDescription(
                new SwitchAddress(i.getDataplaneHost(), List.copyOf(i.getDataplanePortsList())),
                i.getRequiredK(),
                i.getDataplaneMtu(),
                i.getCountsJobs(),
                i.getPoolSlots(),
                i.getJobIndices(),
                i.getMaxWorkers());
    }

    /**
     * The workers as the service takes them: IPv4 literals, resolved here, on the caller's side (the service
     * resolves no names).
     *
     * @throws IllegalArgumentException a worker without an IPv4 address
     */
    static List<Endpoint> endpoints(final List<InetSocketAddress> workers) {
        final List<Endpoint> out = new ArrayList<>();
        for (int r = 0; r < workers.size(); r++) {
            final InetSocketAddress w = workers.get(r);
            if (w.isUnresolved() || !(w.getAddress() instanceof java.net.Inet4Address)) {
                throw new IllegalArgumentException("rank " + r + "'s endpoint " + w + " has no IPv4 address: the "
                        + "switch matches IPv4 sources, so each worker must bind an IPv4 address");
            }
            out.add(Endpoint.newBuilder()
                    .setHost(w.getAddress().getHostAddress())
                    .setPort(w.getPort())
                    .build());
        }
        return out;
    }

    /**
     * The workers of a request, each an IPv4 literal and a port: a name is refused here, before anything looks
     * it up, so no caller can make the switch wait on DNS or probe names through it.
     *
     * @throws IllegalArgumentException naming the first rank that is not a literal with a port
     */
    static List<InetSocketAddress> workers(final List<Endpoint> endpoints) {
        final List<InetSocketAddress> out = new ArrayList<>();
        for (int r = 0; r < endpoints.size(); r++) {
            final Endpoint e = endpoints.get(r);
            final InetAddress a;
            try {
                a = WorkerAddresses.ipv4Literal(e.getHost());
            } catch (final IllegalArgumentException bad) {
                throw new IllegalArgumentException("rank " + r + ": " + bad.getMessage(), bad);
            }
            if (e.getPort() < 1 || e.getPort() > 65535) {
                throw new IllegalArgumentException("rank " + r + ": port " + e.getPort() + " is outside 1..65535");
            }
            out.add(new InetSocketAddress(a, e.getPort()));
        }
        return out;
    }

    static org.switchml.service.v1.Quotas quotas(final Quotas q) {
        return org.switchml.service.v1.Quotas.newBuilder()
                .setSlotsPerJob(q.slotsPerJob())
                .setBytesPerJob(q.bytesPerJob())
                .setJobsPerSession(q.jobsPerSession())
                .setWaitersPerSession(q.waitersPerSession())
                .setSessionsPerToken(q.sessionsPerToken())
                .setSessions(q.sessions())
                .setTokenSharePercent(q.tokenSharePercent())
                .setWorkers(q.workers())
                .setBytes(q.bytes())
                .build();
    }

    /** The quotas a service reports; null when it reports none (a service from before quotas). */
    static Quotas quotas(final org.switchml.service.v1.Quotas q) {
        if (q.getSlotsPerJob() == 0) {
            return null;
        }
        return new Quotas(
                q.getSlotsPerJob(),
                q.getBytesPerJob(),
                q.getJobsPerSession(),
                q.getWaitersPerSession(),
                q.getSessionsPerToken(),
                q.getSessions(),
                q.getTokenSharePercent(),
                q.getWorkers(),
                q.getBytes());
    }

    static JobSpecMessage spec(final JobSpec s) {
        return JobSpecMessage.newBuilder()
                .setJobId(s.jobId())
                .setGeneration(s.generation())
                .setSecret(s.secret())
                .setK(s.k())
                .setPoolSize(s.poolSize())
                .addAllWorkers(endpoints(s.workers()))
                .build();
    }

    static JobSpec spec(final JobSpecMessage m) {
        return new JobSpec(
                m.getJobId(), m.getGeneration(), m.getSecret(), m.getK(), m.getPoolSize(), workers(m.getWorkersList()));
    }

    static Traffic traffic(final SwitchTotals t) {
        final Traffic.Builder b = Traffic.newBuilder()
                .setPacketsIn(t.jobs().packetsIn())
                .setPacketsOut(t.jobs().packetsOut())
                .setRetransmissions(t.jobs().retransmissions())
                .setNotSwitchml(t.switchWide().notSwitchml());
        for (final DropReason r : DropReason.values()) {
            b.putJobDrops(r.name(), t.jobs().drops().get(r));
            b.putSwitchDrops(r.name(), t.switchWide().drops().get(r));
        }
        return b.build();
    }

    static SwitchTotals totals(final Traffic t) {
        return new SwitchTotals(
                new JobCounters(
                        t.getPacketsIn(),
                        t.getPacketsOut(),
                        t.getRetransmissions(),
                        DropCounts.of(r -> t.getJobDropsOrDefault(r.name(), 0L))),
                new SwitchCounters(DropCounts.of(r -> t.getSwitchDropsOrDefault(r.name(), 0L)), t.getNotSwitchml()));
    }

    static ReadJobCountersResponse counters(final JobCounters c) {
        final ReadJobCountersResponse.Builder b = ReadJobCountersResponse.newBuilder()
                .setKnown(true)
                .setPacketsIn(c.packetsIn())
                .setPacketsOut(c.packetsOut())
                .setRetransmissions(c.retransmissions());
        for (final DropReason r : DropReason.values()) {
            final long n = c.drops().get(r);
            if (n != 0) {
                b.putDrops(r.name(), n);
            }
        }
        return b.build();
    }

    static JobCounters counters(final ReadJobCountersResponse r) {
        final Map<String, Long> drops = r.getDropsMap();
        return new JobCounters(
                r.getPacketsIn(),
                r.getPacketsOut(),
                r.getRetransmissions(),
                DropCounts.of(reason -> drops.getOrDefault(reason.name(), 0L)));
    }
}
