package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.p4info.Bytestrings;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;
import p4.v1.P4RuntimeOuterClass.MulticastGroupEntry;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/** Jobs created and removed through the controller, over real gRPC, on the software switch. */
class ControllerJobLifecycleTest {
    private static ControlTestBed bed;

    @BeforeAll
    static void start() {
        bed = ControlTestBed.start(2);
    }

    @AfterAll
    static void stop() {
        bed.close();
    }

    private static List<InetSocketAddress> endpoints(final int n, final int firstPort) {
        final List<InetSocketAddress> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            out.add(new InetSocketAddress("127.0.0.1", firstPort + r));
        }
        return out;
    }

    private static long countFor(final List<TableEntry> entries, final int jobId) {
        // The job id is the first match field of every SwitchML table.
        return entries.stream()
                .filter(e -> Bytestrings.decode(e.getMatch(0).getExact().getValue(), 32, "job")
                        == Integer.toUnsignedLong(jobId))
                .count();
    }

    @Test
    void registeringInstallsEntriesGroupAndTheDataplaneJobAndRemovingTakesThemAway() {
        final SwitchController c = bed.controller;
        assertEquals(SwitchRuntimeServer.API_VERSION, c.apiVersion());
        final JobSpec spec = new JobSpec(501, 3, 64, 16, endpoints(3, 40_001));
        final RegisteredJob job = c.registerJob(spec);
        assertEquals(16, job.resources().poolSize());
        // The registered spec is the requested one under the secret the controller drew.
        assertEquals(spec.withSecret(job.spec().secret()), job.spec());
        assertTrue(bed.server.liveJobs().contains(job.spec()), "dataplane has the job: " + bed.server.liveJobs());

        assertEquals(1, countFor(c.readEntries(P4Names.JOB_TABLE), 501));
        assertEquals(3, countFor(c.readEntries(P4Names.WORKER_TABLE), 501));
        assertEquals(3, countFor(c.readEntries(P4Names.RESULT_TABLE), 501));
        final MulticastGroupEntry group = c.readMulticastGroups().stream()
                .filter(g -> g.getMulticastGroupId() == job.resources().multicastGroup())
                .findFirst()
                .orElseThrow();
        assertEquals(3, group.getReplicasCount());
        for (int r = 0; r < 3; r++) {
            assertEquals(r, group.getReplicas(r).getInstance(), "replica instance = rank");
        }

        assertTrue(c.removeJob(501));
        assertFalse(c.removeJob(501));
        assertEquals(0, countFor(c.readEntries(P4Names.JOB_TABLE), 501));
        assertEquals(0, countFor(c.readEntries(P4Names.WORKER_TABLE), 501));
        assertEquals(0, countFor(c.readEntries(P4Names.RESULT_TABLE), 501));
        assertTrue(c.readMulticastGroups().stream()
                .noneMatch(g -> g.getMulticastGroupId() == job.resources().multicastGroup()));
        assertTrue(bed.server.liveJobs().stream().noneMatch(s -> s.jobId() == 501));
    }

    @Test
    void jobsGetDisjointResourcesAndCollisionsAreRefused() {
        final SwitchController c = bed.controller;
        final RegisteredJob a = c.registerJob(new JobSpec(601, 1, 64, 100, endpoints(2, 41_001)));
        final RegisteredJob b = c.registerJob(new JobSpec(602, 1, 32, 50, endpoints(4, 41_101)));
        try {
            assertFalse(a.resources().poolOverlaps(b.resources()));
            assertTrue(a.resources().jobIndex() != b.resources().jobIndex());
            assertTrue(a.resources().multicastGroup() != b.resources().multicastGroup());

            final JobResources clash = new JobResources(60, a.resources().poolBase() + 10, 8, 900);
            final SwitchControlException overlap = assertThrows(
                    SwitchControlException.class,
                    () -> c.registerJob(new JobSpec(603, 1, 64, 8, endpoints(1, 41_201)), List.of(), clash));
            assertEquals(Status.Code.ALREADY_EXISTS, overlap.code());
            assertTrue(
                    overlap.getMessage().contains("overlaps")
                            && overlap.getMessage().contains("job 601"),
                    overlap.getMessage());
            final SwitchControlException index = assertThrows(
                    SwitchControlException.class,
                    () -> c.registerJob(
                            new JobSpec(603, 1, 64, 8, endpoints(1, 41_201)),
                            List.of(),
                            new JobResources(b.resources().jobIndex(), 1500, 8, 901)));
            assertTrue(index.getMessage().contains("job index"), index.getMessage());
            assertEquals(null, c.job(603));

            // Registering the same job again is a new session: a new secret, the same resources (a MODIFY of
            // job_table), and the dataplane runs only the new registration.
            final RegisteredJob again = c.registerJob(a.spec());
            assertEquals(a.resources(), again.resources());
            assertEquals(a.spec().withSecret(again.spec().secret()), again.spec());
            assertTrue(again.spec().secret() != a.spec().secret(), "a fresh secret");
            assertTrue(bed.server.liveJobs().contains(again.spec()));
            assertFalse(bed.server.liveJobs().contains(a.spec()));

            // A new attempt of the same job changes its generation and secret (a MODIFY of job_table).
            final RegisteredJob a2 = c.registerJob(new JobSpec(601, 2, 64, 100, endpoints(2, 41_001)));
            assertEquals(a.resources(), a2.resources());
            assertTrue(bed.server.liveJobs().contains(a2.spec()));
        } finally {
            c.removeJob(601);
            c.removeJob(602);
        }
    }

    @Test
    void exhaustedJobIndicesAndPoolSlotsAreRefusedClearly() {
        final SwitchController c = bed.controller;
        final List<Integer> ids = new ArrayList<>();
        try {
            final RegisteredJob big = c.registerJob(new JobSpec(700, 1, 64, 1900, endpoints(1, 42_000)));
            ids.add(700);
            final SwitchControlException pool = assertThrows(
                    SwitchControlException.class,
                    () -> c.registerJob(new JobSpec(701, 1, 64, 200, endpoints(1, 42_001))));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, pool.code());
            assertTrue(pool.getMessage().contains("pool slots"), pool.getMessage());
            assertNotNull(big);
            final Set<Integer> indices = new HashSet<>();
            for (int j = 1; j < 64; j++) {
                indices.add(c.registerJob(new JobSpec(700 + j, 1, 64, 1, endpoints(1, 42_100 + j)))
                        .resources()
                        .jobIndex());
                ids.add(700 + j);
            }
            assertEquals(63, indices.size());
            final SwitchControlException full = assertThrows(
                    SwitchControlException.class,
                    () -> c.registerJob(new JobSpec(800, 1, 64, 1, endpoints(1, 42_300))));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, full.code());
            assertTrue(full.getMessage().contains("job indices"), full.getMessage());
        } finally {
            for (final int id : ids) {
                c.removeJob(id);
            }
        }
        assertTrue(bed.server.liveJobs().isEmpty(), "all removed: " + bed.server.liveJobs());
    }

    @Test
    void aBmv2PipelineRefusesAnyKButSixtyFour() {
        // The software switch accepts (and ignores) a BMv2 JSON; the controller then applies BMv2's rules.
        try (ControlTestBed bmv2 = ControlTestBed.start(
                1, PipelineConfig.bmv2("{\"program\": \"switchml.p4\"}".getBytes(StandardCharsets.UTF_8)))) {
            assertEquals(Target.BMV2, bmv2.controller.target());
            final List<WorkerAttachment> ports =
                    List.of(new WorkerAttachment(0x020000000001L, 1), new WorkerAttachment(0x020000000002L, 2));
            final IllegalArgumentException k = assertThrows(
                    IllegalArgumentException.class,
                    () -> bmv2.controller.registerJob(new JobSpec(1, 1, 32, 4, endpoints(2, 43_001)), ports));
            assertTrue(k.getMessage().contains("k = 32") && k.getMessage().contains("64"), k.getMessage());
            final IllegalArgumentException noPorts = assertThrows(
                    IllegalArgumentException.class,
                    () -> bmv2.controller.registerJob(new JobSpec(1, 1, 64, 4, endpoints(2, 43_001))));
            assertTrue(noPorts.getMessage().contains("attachment"), noPorts.getMessage());
            final RegisteredJob ok = bmv2.controller.registerJob(new JobSpec(1, 1, 64, 4, endpoints(2, 43_001)), ports);
            final MulticastGroupEntry g = bmv2.controller.readMulticastGroups().get(0);
            assertEquals(2, g.getReplicas(1).getEgressPort());
            assertEquals(1, g.getReplicas(1).getInstance());
            assertEquals(ok.resources().multicastGroup(), g.getMulticastGroupId());
            assertTrue(bmv2.controller.readPipeline().getP4DeviceConfig().size() > 0);
        }
    }
}
