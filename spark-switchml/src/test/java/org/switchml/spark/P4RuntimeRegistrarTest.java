package org.switchml.spark;

import org.junit.jupiter.api.Test;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.config.WorkerHosts;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.registrar.EmbeddedSwitchRegistrar;
import org.switchml.spark.registrar.P4RuntimeRegistrar;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.runtime.SwitchRuntimeServer;
import org.switchml.protocol.JobSpec;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The driver installs jobs through the P4Runtime controller: on an external standalone software switch
 * named by address, and on the embedded one (the default).
 */
class P4RuntimeRegistrarTest {

    @Test
    void externalSwitchIsProgrammedOverP4Runtime() {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("p4runtime registrar", 21));
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(2));
             SwitchRuntimeServer server = SwitchRuntimeServer.start(sw, "127.0.0.1", 0)) {
            final Map<String, String> settings = Map.of(
                    SwitchMLConfig.SWITCH_ADDRESS.key(), sw.address().toString(),
                    SwitchMLConfig.P4RUNTIME_ADDRESS.key(), "127.0.0.1:" + server.port());
            try (DriverRuntime rt = DriverRuntime.create(settings::get, "127.0.0.1", settings)) {
                assertTrue(rt.registrar() instanceof P4RuntimeRegistrar);
                assertEquals(sw.address(), rt.switchAddress());
                runExactAllReduce(rt, rnd, 3);
                assertTrue(server.liveJobs().isEmpty(), "removed job must be gone from the switch");
            }
        }
    }

    @Test
    void embeddedSwitchIsProgrammedThroughTheSameController() {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("embedded registrar", 22));
        final Map<String, String> settings = Map.of();
        try (DriverRuntime rt = DriverRuntime.create(settings::get, "127.0.0.1", settings)) {
            final EmbeddedSwitchRegistrar reg = (EmbeddedSwitchRegistrar) rt.registrar();
            assertTrue(reg.controller().isPrimary());
            runExactAllReduce(rt, rnd, 4);
            assertTrue(reg.controller().jobs().isEmpty());
        }
    }

    @Test
    void externalSwitchWithoutAControlPathIsAClearError() {
        final Map<String, String> settings = Map.of(SwitchMLConfig.SWITCH_ADDRESS.key(), "127.0.0.1:48864");
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DriverRuntime.create(settings::get, "127.0.0.1", settings));
        assertTrue(e.getMessage().contains(SwitchMLConfig.P4RUNTIME_ADDRESS.key()), e.getMessage());
    }

    @Test
    void aBmv2PipelineMeansKOf64AndWorkersFromTheHostTable(@org.junit.jupiter.api.io.TempDir final Path dir)
            throws IOException {
        // The software switch's server takes a BMv2 device config (and ignores it), so the BMv2 settings
        // are exercised here without BMv2; Bmv2SparkIT runs them against the real one.
        final Path json = Files.writeString(dir.resolve("switchml.json"), "{}");
        final Path hosts = Files.writeString(dir.resolve("hosts"),
                "# the test's loopback worker\n127.0.0.1 7 02:00:00:00:00:07\n");
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
             SwitchRuntimeServer server = SwitchRuntimeServer.start(sw, "127.0.0.1", 0);
             SwitchMLClient client = SwitchMLClient.open(ClientOptions.defaults())) {
            final Map<String, String> settings = Map.of(
                    SwitchMLConfig.SWITCH_ADDRESS.key(), sw.address().toString(),
                    SwitchMLConfig.P4RUNTIME_ADDRESS.key(), "127.0.0.1:" + server.port(),
                    SwitchMLConfig.P4_JSON.key(), json.toString(),
                    SwitchMLConfig.P4_HOSTS.key(), hosts.toString());
            try (P4RuntimeRegistrar reg = new P4RuntimeRegistrar(sw.address(), settings)) {
                assertEquals(64, reg.requiredK());
                final JobSpec spec = reg.register(new JobSpec(41, 1, 64, 4, List.of(client.localAddress())));
                assertEquals(List.of(new org.switchml.control.WorkerAttachment(0x020000000007L, 7)),
                        reg.controller().job(41).attachments());
                final int[] sum = client.join(spec, 0, sw.address()).allReduce(new int[] {5, -6, 7});
                assertArrayEquals(new int[] {5, -6, 7}, sum);
                final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> reg.register(new JobSpec(42, 1, 64, 4, List.of(new InetSocketAddress("127.0.0.2", 9)))));
                assertTrue(e.getMessage().contains("127.0.0.2") && e.getMessage().contains("host table"), e.getMessage());
            }
            final Map<String, String> noHosts = Map.of(SwitchMLConfig.P4RUNTIME_ADDRESS.key(), "127.0.0.1:" + server.port(),
                    SwitchMLConfig.P4_JSON.key(), json.toString());
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new P4RuntimeRegistrar(sw.address(), noHosts));
            assertTrue(e.getMessage().contains(SwitchMLConfig.P4_HOSTS.key()), e.getMessage());
        }
    }

    @Test
    void aWorkerHostSubnetNamesTheExecutorsOwnAddress() {
        assertEquals("127.0.0.1", WorkerHosts.resolve("127.0.0.0/8"));
        assertEquals("10.1.2.3", WorkerHosts.resolve("10.1.2.3"));
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> WorkerHosts.resolve("127.255.255.254/32"));
        assertTrue(e.getMessage().contains("no interface"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SwitchMLConfig.WORKER_HOST.from(Map.of(
                SwitchMLConfig.WORKER_HOST.key(), "10.0.0.0/33")::get));
    }

    private static void runExactAllReduce(final DriverRuntime rt, final SplittableRandom rnd, final int n) {
        final List<SwitchMLClient> clients = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        try {
            for (int r = 0; r < n; r++) {
                final SwitchMLClient c = SwitchMLClient.open(ClientOptions.defaults().withFp64(true));
                clients.add(c);
                endpoints.add(c.localAddress());
            }
            final JobSpec spec = rt.register(new JobSpec(rt.newJobId(), 0, 64, 32, endpoints));
            final List<JobSession> sessions = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                sessions.add(clients.get(r).join(spec, r, rt.switchAddress()));
            }
            final double[][] in = new double[n][];
            for (int r = 0; r < n; r++) {
                in[r] = Vectors.mixed(rnd, 5_000);
            }
            final List<double[]> out = TestCluster.parallel(n, r -> sessions.get(r).allReduce(in[r]));
            final double[] expected = Reference.fp64(in, 64);
            for (final double[] got : out) {
                assertArrayEquals(expected, got, 0.0);
            }
            rt.remove(spec.jobId());
            rt.awaitRemoval(spec.jobId()); // removal runs in the background
        } finally {
            for (final SwitchMLClient c : clients) {
                c.close();
            }
        }
    }
}
