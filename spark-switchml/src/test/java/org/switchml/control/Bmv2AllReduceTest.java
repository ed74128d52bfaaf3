package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.switchml.client.ClientOptions;
import org.switchml.client.ClientStats;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobCounters;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchCounters;
import org.switchml.testing.Seeds;
import p4.v1.P4RuntimeOuterClass.MulticastGroupEntry;
import p4.v1.P4RuntimeOuterClass.Replica;

/**
 * Allreduce through a real BMv2 running the p4c-compiled switchml.p4, end to end: the switch on veth
 * ports, each worker a JVM of its own inside its host's network namespace, the job installed by
 * {@link SwitchController} over P4Runtime (table entries, multicast group; worker ports and MACs from the
 * host table). Every worker's result must equal, bit for bit, what the software switch computes for the
 * same inputs (lengths 1, 63, 65 and 10,000; float and fp64 double), and the job's P4 counters must obey
 * the same accounting as the software switch's for the same kind of traffic (see {@link #checkCounters}).
 * Runs n = 2, 3, 4; 5 % loss both ways (nftables in every host); two concurrent jobs.
 *
 * <p>Skipped, with one loud line, where p4c, simple_switch_grpc, nft or root are missing.
 *
 * <p>A longer bound than the suite's 10 minutes: a scenario waits up to {@link #RUN_MS} for its BMv2
 * run and as long again for its software-switch reference.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class Bmv2AllReduceTest {
    private static final int[] LENGTHS = {1, 63, 65, 10_000};
    private static final int K = 64;
    private static final int POOL = 16;
    private static final long RUN_MS = 240_000;
    private static Bmv2Bed bed;
    private static Path work;
    private static int nextJob = 9100;

    @BeforeAll
    static void up() throws Exception {
        Bmv2Bed.assumeTools("Bmv2AllReduceTest");
        work = Path.of("target", "bmv2-allreduce").toAbsolutePath();
        Files.createDirectories(work);
        final long t0 = System.nanoTime();
        bed = Bmv2Bed.up("ar", 4);
        System.out.println("[bmv2] switch up with 4 hosts, pipeline pushed, in " + ms(t0) + " ms; P4Runtime "
                + bed.controller.apiVersion() + "; host table "
                + bed.hostTable.hosts().size() + " hosts");
    }

    @AfterAll
    static void down() {
        if (bed != null) {
            bed.close();
        }
    }

    static long ms(final long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    /** One job of a scenario: its hosts (rank r on host hosts[r]) and UDP port. */
    record JobPlan(int[] hosts, int udpPort, long seed) {}

    @ParameterizedTest(name = "n={0}")
    @ValueSource(ints = {2, 3, 4})
    void bitExactWithTheSoftwareSwitch(final int n) throws Exception {
        final int[] hosts = new int[n];
        for (int r = 0; r < n; r++) {
            hosts[r] = r + 1;
        }
        scenario("n" + n, 0, List.of(new JobPlan(hosts, 50_001, Seeds.seed("bmv2 allreduce n=" + n, 7100L + n))));
    }

    @Test
    void fivePercentLossBothWays() throws Exception {
        scenario(
                "loss",
                5,
                List.of(new JobPlan(new int[] {1, 2, 3, 4}, 50_001, Seeds.seed("bmv2 allreduce 5% loss", 7200L))));
    }

    @Test
    void twoConcurrentJobs() throws Exception {
        final long seed = Seeds.seed("bmv2 two concurrent jobs", 7300L);
        // The second job's ranks run the other way round, on three of the hosts, from another UDP port.
        scenario(
                "twojobs",
                0,
                List.of(
                        new JobPlan(new int[] {1, 2, 3, 4}, 50_001, seed),
                        new JobPlan(new int[] {4, 3, 2}, 50_002, seed + 1)));
    }

    private static InetSocketAddress hostEndpoint(final int host, final int port) {
        return new InetSocketAddress("10.0.0." + host, port);
    }

    private void scenario(final String label, final int lossPct, final List<JobPlan> plans) throws Exception {
        final Path dir = work.resolve(label);
        deleteTree(dir);
        Files.createDirectories(dir);
        bed.loss(lossPct);
        final SwitchCounters switchBefore = bed.controller.readSwitchCounters();
        // 1. Install every job over P4Runtime; check what landed on the switch.
        final List<RegisteredJob> jobs = new ArrayList<>();
        for (final JobPlan plan : plans) {
            final List<InetSocketAddress> endpoints = new ArrayList<>();
            for (final int h : plan.hosts()) {
                endpoints.add(hostEndpoint(h, plan.udpPort()));
            }
            final RegisteredJob job = bed.controller.registerJob(new JobSpec(nextJob++, 1, K, POOL, endpoints));
            jobs.add(job);
            checkInstalled(job, plan);
        }
        // 2. One worker JVM per host, running that host's ranks of every job.
        // Without loss, a timeout well above BMv2's queueing delay (tens of ms at n = 4), so that every packet
        // is sent once and the counts can be compared with the software switch's exactly.
        launch(bed, dir, label, jobs, plans, LENGTHS, Map.of(), lossPct > 0 ? 40 : 1000);

        // 3. Compare with the software switch; check the counters; remove the jobs.
        final Map<Integer, long[]> loss = bed.lossCounters();
        for (int j = 0; j < plans.size(); j++) {
            final JobSpec spec = jobs.get(j).spec();
            final NamespaceWorker.Output[] bmv2 = new NamespaceWorker.Output[spec.numWorkers()];
            for (int r = 0; r < bmv2.length; r++) {
                bmv2[r] = NamespaceWorker.read(dir.resolve("job" + j + "-rank" + r + ".bin"));
            }
            final Reference ref = softwareSwitch(spec.numWorkers(), plans.get(j).seed());
            for (int r = 0; r < bmv2.length; r++) {
                for (int c = 0; c < ref.results.length; c++) {
                    assertArrayEquals(
                            ref.results[c],
                            bmv2[r].results()[c],
                            label + " job " + j + " rank " + r
                                    + " call " + c + " ("
                                    + NamespaceWorker.calls(LENGTHS).get(c) + "): BMv2 result differs "
                                    + "from the software switch's");
                }
            }
            long dropIn = 0;
            long dropOut = 0;
            for (final int h : plans.get(j).hosts()) {
                final long[] l = loss.getOrDefault(h, new long[2]);
                dropIn += l[0];
                dropOut += l[1];
            }
            final List<ClientStats> stats =
                    Arrays.stream(bmv2).map(NamespaceWorker.Output::stats).toList();
            final JobCounters counters = settledCounters(spec.jobId(), stats, dropOut);
            System.out.println("[bmv2] " + label + " job " + j + " (n=" + spec.numWorkers() + "): BMv2 " + counters
                    + "; workers " + stats + "; nftables dropped " + dropIn + " results, " + dropOut + " contributions"
                    + "; software switch " + ref.counters + "; its workers " + ref.stats);
            checkCounters("BMv2 " + label + " job " + j, counters, stats, dropIn, dropOut);
            checkCounters("software switch " + label + " job " + j, ref.counters, ref.stats, 0, 0);
            final long retx = stats.stream()
                            .mapToLong(ClientStats::retransmissions)
                            .sum()
                    + ref.stats.stream().mapToLong(ClientStats::retransmissions).sum();
            if (lossPct == 0 && retx == 0) {
                // The same traffic (every packet once): the same counts.
                assertEquals(ref.counters.packetsIn(), counters.packetsIn(), label + ": packets in");
                assertEquals(ref.counters.packetsOut(), counters.packetsOut(), label + ": packets out");
                assertEquals(ref.counters.retransmissions(), counters.retransmissions(), label + ": retransmissions");
                for (final DropReason d : DropReason.values()) {
                    assertEquals(ref.counters.drops(d), counters.drops(d), label + ": drops " + d);
                }
            }
            assertTrue(bed.controller.removeJob(spec.jobId()));
        }
        final SwitchCounters switchAfter = bed.controller.readSwitchCounters();
        for (final DropReason d : EnumSet.of(DropReason.MALFORMED, DropReason.UNKNOWN_JOB)) {
            assertEquals(switchBefore.drops(d), switchAfter.drops(d), label + ": switch-wide " + d);
        }
        assertEquals(
                switchBefore.notSwitchml(), switchAfter.notSwitchml(), label + ": non-SwitchML frames reached BMv2");
        bed.loss(0);
    }

    /**
     * Runs one worker JVM per host (inside its namespace) for the ranks of every job on it, all released
     * together once each has joined; fails naming the host when one fails. Results land in
     * {@code dir/jobJ-rankR.bin}; returns the wall time from the release to the last exit, in ms.
     */
    static long launch(
            final Bmv2Bed bed,
            final Path dir,
            final String label,
            final List<RegisteredJob> jobs,
            final List<JobPlan> plans,
            final int[] lengths,
            final Map<String, String> extra,
            final long retransmitMs)
            throws IOException, InterruptedException {
        final Path go = dir.resolve("go");
        final Map<Integer, Process> procs = new LinkedHashMap<>();
        try {
            final Map<Integer, Properties> perHost = new LinkedHashMap<>();
            final Map<Integer, Integer> sessions = new LinkedHashMap<>();
            for (int j = 0; j < plans.size(); j++) {
                final JobSpec spec = jobs.get(j).spec();
                for (int r = 0; r < spec.numWorkers(); r++) {
                    final int h = plans.get(j).hosts()[r];
                    final Properties p = perHost.computeIfAbsent(h, x -> new Properties());
                    final int s = sessions.merge(h, 1, Integer::sum) - 1;
                    final String pre = "s" + s + ".";
                    p.setProperty(pre + "jobId", Integer.toString(spec.jobId()));
                    p.setProperty(pre + "generation", Integer.toString(spec.generation()));
                    p.setProperty(pre + "secret", Integer.toUnsignedString(spec.secret()));
                    p.setProperty(pre + "k", Integer.toString(spec.k()));
                    p.setProperty(pre + "pool", Integer.toString(spec.poolSize()));
                    p.setProperty(
                            pre + "workers",
                            String.join(
                                    ",",
                                    spec.workers().stream()
                                            .map(w -> w.getHostString() + ":" + w.getPort())
                                            .toList()));
                    p.setProperty(pre + "rank", Integer.toString(r));
                    p.setProperty(pre + "seed", Long.toString(plans.get(j).seed()));
                    p.setProperty(
                            pre + "lengths",
                            String.join(
                                    ",",
                                    Arrays.stream(lengths)
                                            .mapToObj(Integer::toString)
                                            .toList()));
                    extra.forEach((k, v) -> p.setProperty(pre + k, v));
                    p.setProperty(
                            pre + "out",
                            dir.resolve("job" + j + "-rank" + r + ".bin").toString());
                }
            }
            final long t0 = System.nanoTime();
            for (final Map.Entry<Integer, Properties> e : perHost.entrySet()) {
                final Properties p = e.getValue();
                p.setProperty("sessions", Integer.toString(sessions.get(e.getKey())));
                p.setProperty("switch", Bmv2Bed.SWITCH);
                p.setProperty("go", go.toString());
                p.setProperty("retransmitMs", Long.toString(retransmitMs));
                p.setProperty("resultTimeoutMs", "60000");
                final Path file = dir.resolve("h" + e.getKey() + ".properties");
                try (OutputStream out = Files.newOutputStream(file)) {
                    p.store(out, "NamespaceWorker of host " + e.getKey());
                }
                procs.put(
                        e.getKey(),
                        bed.startJvm(
                                e.getKey(),
                                dir.resolve("h" + e.getKey() + ".log"),
                                NamespaceWorker.class.getName(),
                                file.toString()));
            }
            for (final Map.Entry<Integer, Process> e : procs.entrySet()) {
                awaitLine(e.getValue(), dir.resolve("h" + e.getKey() + ".log"), "READY", 90_000);
            }
            final long started = System.nanoTime();
            Files.createFile(go);
            for (final Map.Entry<Integer, Process> e : procs.entrySet()) {
                final Path log = dir.resolve("h" + e.getKey() + ".log");
                if (!e.getValue().waitFor(RUN_MS, TimeUnit.MILLISECONDS)) {
                    throw new AssertionError("host " + e.getKey() + "'s worker did not finish within " + RUN_MS
                            + " ms:\n" + Files.readString(log));
                }
                assertEquals(
                        0,
                        e.getValue().exitValue(),
                        "host " + e.getKey() + "'s worker failed:\n" + Files.readString(log));
            }
            System.out.println("[bmv2] " + label + ": workers started in " + (started - t0) / 1_000_000
                    + " ms, allreduce through BMv2 took " + ms(started) + " ms");
            return ms(started);
        } finally {
            for (final Process p : procs.values()) {
                p.destroyForcibly();
            }
        }
    }

    /** The job's table entries and multicast group, as BMv2 reports them, carry the host table's ports. */
    private static void checkInstalled(final RegisteredJob job, final JobPlan plan) {
        final JobSpec spec = job.spec();
        // P4Runtime byte strings are canonical (no leading zero bytes).
        final long jobEntries = bed.controller.readEntries(P4Names.JOB_TABLE).stream()
                .filter(e ->
                        new BigInteger(1, e.getMatch(0).getExact().getValue().toByteArray()).longValue()
                                == Integer.toUnsignedLong(spec.jobId()))
                .count();
        assertEquals(1, jobEntries, "job_table entry of job " + spec.jobName());
        assertTrue(bed.controller.readEntries(P4Names.WORKER_TABLE).size() >= spec.numWorkers());
        assertTrue(bed.controller.readEntries(P4Names.RESULT_TABLE).size() >= spec.numWorkers());
        final MulticastGroupEntry group = bed.controller.readMulticastGroups().stream()
                .filter(g -> g.getMulticastGroupId() == job.resources().multicastGroup())
                .findFirst()
                .orElseThrow(() -> new AssertionError(
                        "no multicast group " + job.resources().multicastGroup()));
        final List<Integer> ports = group.getReplicasList().stream()
                .sorted(Comparator.comparingInt(Replica::getInstance))
                .map(Replica::getEgressPort)
                .toList();
        final List<Integer> expected = Arrays.stream(plan.hosts()).boxed().toList();
        assertEquals(expected, ports, "replica ports (rank order) of job " + spec.jobName());
    }

    /**
     * The job's counters once every contribution the workers sent, less those nftables dropped, has been
     * counted in (retransmissions may still be on their way when the last worker finishes): bounded polling.
     */
    private static JobCounters settledCounters(final int jobId, final List<ClientStats> stats, final long dropOut)
            throws InterruptedException {
        final long expectIn = stats.stream().mapToLong(ClientStats::packetsSent).sum() - dropOut;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        JobCounters c = bed.controller.readJobCounters(jobId);
        while (c.packetsIn() < expectIn && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
            c = bed.controller.readJobCounters(jobId);
        }
        return c;
    }

    /**
     * The accounting both switches must satisfy (p4/README.md, "Counters"), with P the packets each worker
     * numbered (sent less retransmitted; the same for every worker):
     * <ul>
     *   <li>packets in = Σ sent − contributions lost on the way (nftables' count);</li>
     *   <li>packets in = n·P + retransmissions seen + STALE_SEQ drops (every packet arrives at least once
     *       for its slot to complete; later copies are retransmissions or late copies);</li>
     *   <li>packets out = n·P + answered retransmissions (= retransmissions − DUPLICATE_PENDING): n RESULT
     *       copies per packet number, one RETRANSMIT_RESULT per answer;</li>
     *   <li>packets out ≥ results the workers received + results lost (a late answer may land after a
     *       worker finished), equal when nothing was retransmitted;</li>
     *   <li>no other drop.</li>
     * </ul>
     */
    static void checkCounters(
            final String what,
            final JobCounters c,
            final List<ClientStats> stats,
            final long resultsLost,
            final long contributionsLost) {
        final int n = stats.size();
        final long p = stats.get(0).packetsSent() - stats.get(0).retransmissions();
        for (final ClientStats s : stats) {
            assertEquals(p, s.packetsSent() - s.retransmissions(), what + ": every worker numbers the same packets");
        }
        final long sent = stats.stream().mapToLong(ClientStats::packetsSent).sum();
        final long received = stats.stream()
                .mapToLong(s -> s.resultsAccepted() + s.resultsIgnored())
                .sum();
        final long retxSent =
                stats.stream().mapToLong(ClientStats::retransmissions).sum();
        assertEquals(sent - contributionsLost, c.packetsIn(), what + ": packets in = sent - lost");
        assertEquals(
                n * p + c.retransmissions() + c.drops(DropReason.STALE_SEQ),
                c.packetsIn(),
                what + ": packets in = n*P + retransmissions + STALE_SEQ");
        assertEquals(
                n * p + c.retransmissions() - c.drops(DropReason.DUPLICATE_PENDING),
                c.packetsOut(),
                what + ": packets out = n*P + answered retransmissions");
        assertTrue(c.packetsOut() >= received + resultsLost, what + ": packets out >= received + lost");
        if (retxSent == 0) {
            assertEquals(received + resultsLost, c.packetsOut(), what + ": packets out = received + lost");
        }
        for (final DropReason d : DropReason.values()) {
            if (d != DropReason.STALE_SEQ && d != DropReason.DUPLICATE_PENDING) {
                assertEquals(0, c.drops(d), what + ": drops " + d);
            }
        }
    }

    /** The software switch's results (rank 0's; all ranks are checked equal) and counters for the same calls. */
    private record Reference(long[][] results, JobCounters counters, List<ClientStats> stats) {}

    private static Reference softwareSwitch(final int n, final long seed) throws Exception {
        try (ControlTestBed sw = ControlTestBed.start(1)) {
            final List<SwitchMLClient> clients = new ArrayList<>();
            try {
                final List<InetSocketAddress> endpoints = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    final SwitchMLClient c =
                            SwitchMLClient.open(ClientOptions.defaults().withRetransmitTimeoutMs(1000, 2000));
                    clients.add(c);
                    endpoints.add(c.localAddress());
                }
                final JobSpec spec = sw.controller
                        .registerJob(new JobSpec(1, 1, K, POOL, endpoints))
                        .spec();
                final List<NamespaceWorker.Call> calls = NamespaceWorker.calls(LENGTHS);
                final long[][][] results = new long[n][][];
                final List<Thread> threads = new ArrayList<>();
                final List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
                for (int r = 0; r < n; r++) {
                    final int rank = r;
                    final JobSession session = clients.get(r).join(spec, r, sw.sw.address());
                    final Thread t = new Thread(() -> {
                        try {
                            results[rank] = NamespaceWorker.run(session, seed, rank, calls);
                        } catch (final Throwable e) {
                            failures.add(e);
                        }
                    });
                    threads.add(t);
                    t.start();
                }
                for (int r = 0; r < n; r++) {
                    final Thread t = threads.get(r);
                    t.join(RUN_MS);
                    assertFalse(t.isAlive(), "software switch: rank " + r + " still running after " + RUN_MS + " ms");
                }
                assertTrue(failures.isEmpty(), "software switch run failed: " + failures);
                for (int r = 1; r < n; r++) {
                    for (int c = 0; c < calls.size(); c++) {
                        assertArrayEquals(results[0][c], results[r][c], "software switch: rank " + r + " call " + c);
                    }
                }
                final List<ClientStats> stats =
                        clients.stream().map(SwitchMLClient::stats).toList();
                return new Reference(results[0], sw.controller.readJobCounters(spec.jobId()), stats);
            } finally {
                clients.forEach(SwitchMLClient::close);
            }
        }
    }

    private static void awaitLine(final Process p, final Path log, final String line, final long timeoutMs)
            throws IOException, InterruptedException {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            final String text = Files.exists(log) ? Files.readString(log) : "";
            if (text.contains(line)) {
                return;
            }
            if (!p.isAlive()) {
                throw new AssertionError("worker exited (" + p.exitValue() + ") before " + line + ":\n" + text);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no " + line + " within " + timeoutMs + " ms in " + log + ":\n" + text);
            }
            // Bounded polling of the log another process writes.
            Thread.sleep(20);
        }
    }

    static void deleteTree(final Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (final Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
