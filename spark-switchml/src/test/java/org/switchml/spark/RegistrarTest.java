package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.Wire;
import org.switchml.service.standalone.SwitchMain;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.config.WorkerHosts;
import org.switchml.spark.driver.DriverRuntime;
import org.switchml.spark.registrar.EmbeddedSwitchRegistrar;
import org.switchml.spark.registrar.JobIds;
import org.switchml.spark.registrar.JobServiceRegistrar;
import org.switchml.testing.Reference;
import org.switchml.testing.Seeds;
import org.switchml.testing.TestCluster;
import org.switchml.testing.Vectors;

/**
 * The driver installs jobs through a job service: a shared standalone switch's, named by address with the rack's
 * token, and the embedded switch's (the default), which runs the same service in the driver.
 */
@Timeout(120)
class RegistrarTest {
    @TempDir
    Path dir;

    @Test
    void aSharedSwitchIsProgrammedThroughItsJobService() {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("job service registrar", 21));
        try (SwitchMain.Running sw = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--lanes",
                "2",
                "--service-port",
                "0",
                "--token-file",
                dir.resolve("token").toString())) {
            final Map<String, String> settings = Map.of(
                    SwitchMLConfig.JOB_SERVICE_ADDRESS.key(), sw.serviceAddress(),
                    SwitchMLConfig.AUTH_TOKEN_FILE.key(), sw.tokenFile().toString());
            try (DriverRuntime rt = DriverRuntime.create(settings::get, "127.0.0.1", settings)) {
                assertTrue(rt.registrar() instanceof JobServiceRegistrar);
                assertEquals(sw.sw().address(), rt.switchAddress(), "the service tells the dataplane address");
                final JobIds ids = rt.registrar().jobIds();
                final int id = rt.newJobId();
                assertTrue(id >= ids.base() && id - ids.base() < ids.count(), id + " outside " + ids);
                runExactAllReduce(rt, rnd, 3);
                assertEquals(1, sw.jobs().desk().occupancy().sessions());
                assertEquals(0, sw.jobs().desk().occupancy().jobs(), "the removed job must be gone from the switch");
                assertTrue(sw.p4runtime().liveJobs().isEmpty());
            }
            assertEquals(0, sw.jobs().desk().occupancy().sessions(), "a closed driver closes its session");
        }
    }

    @Test
    void aSwitchThatCapsJobWidthSaysSoAndRefusesWiderJobs() {
        try (SwitchMain.Running sw = SwitchMain.start(
                new PrintStream(new ByteArrayOutputStream()),
                "--port",
                "0",
                "--service-port",
                "0",
                "--token-file",
                dir.resolve("token").toString(),
                "--max-workers-per-job",
                "2")) {
            final Map<String, String> settings = Map.of(
                    SwitchMLConfig.JOB_SERVICE_ADDRESS.key(), sw.serviceAddress(),
                    SwitchMLConfig.AUTH_TOKEN_FILE.key(), sw.tokenFile().toString());
            try (DriverRuntime rt = DriverRuntime.create(settings::get, "127.0.0.1", settings)) {
                assertEquals(2, rt.registrar().maxWorkers(), "the driver plans (and falls back) by the switch's cap");
                final List<InetSocketAddress> three = List.of(
                        new InetSocketAddress("127.0.0.1", 7001),
                        new InetSocketAddress("127.0.0.1", 7002),
                        new InetSocketAddress("127.0.0.1", 7003));
                final RuntimeException e = assertThrows(
                        RuntimeException.class, () -> rt.register(new JobSpec(rt.newJobId(), 0, 64, 32, three)));
                assertTrue(
                        e.getMessage().contains("3 workers") && e.getMessage().contains("at most 2"), e.getMessage());
                assertEquals(0, sw.jobs().desk().occupancy().jobs());
            }
        }
    }

    @Test
    void embeddedSwitchIsProgrammedThroughTheSameService() {
        final SplittableRandom rnd = new SplittableRandom(Seeds.seed("embedded registrar", 22));
        final Map<String, String> settings = Map.of();
        try (DriverRuntime rt = DriverRuntime.create(settings::get, "127.0.0.1", settings)) {
            final EmbeddedSwitchRegistrar reg = (EmbeddedSwitchRegistrar) rt.registrar();
            assertTrue(reg.controller().isPrimary());
            assertEquals(Wire.MAX_WORKERS, reg.maxWorkers(), "the software switch takes every rank");
            runExactAllReduce(rt, rnd, 4);
            assertTrue(reg.controller().jobs().isEmpty());
        }
    }

    @Test
    void externalSwitchWithoutAControlPathOrTokenIsAClearError() {
        final Map<String, String> settings = Map.of(SwitchMLConfig.SWITCH_ADDRESS.key(), "127.0.0.1:48864");
        final IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> DriverRuntime.create(settings::get, "127.0.0.1", settings));
        assertTrue(e.getMessage().contains(SwitchMLConfig.JOB_SERVICE_ADDRESS.key()), e.getMessage());
        final Map<String, String> noToken = Map.of(SwitchMLConfig.JOB_SERVICE_ADDRESS.key(), "127.0.0.1:9560");
        final IllegalArgumentException t = assertThrows(
                IllegalArgumentException.class, () -> DriverRuntime.create(noToken::get, "127.0.0.1", noToken));
        assertTrue(t.getMessage().contains(SwitchMLConfig.AUTH_TOKEN_FILE.key()), t.getMessage());
    }

    @Test
    void aWorkerHostSubnetNamesTheExecutorsOwnAddress() {
        assertEquals("127.0.0.1", WorkerHosts.resolve("127.0.0.0/8"));
        assertEquals("10.1.2.3", WorkerHosts.resolve("10.1.2.3"));
        final IllegalStateException e =
                assertThrows(IllegalStateException.class, () -> WorkerHosts.resolve("127.255.255.254/32"));
        assertTrue(e.getMessage().contains("no interface"), e.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () -> SwitchMLConfig.WORKER_HOST.from(Map.of(SwitchMLConfig.WORKER_HOST.key(), "10.0.0.0/33")::get));
    }

    private static void runExactAllReduce(final DriverRuntime rt, final SplittableRandom rnd, final int n) {
        final List<SwitchMLClient> clients = new ArrayList<>();
        final List<InetSocketAddress> endpoints = new ArrayList<>();
        try {
            for (int r = 0; r < n; r++) {
                final SwitchMLClient c =
                        SwitchMLClient.open(ClientOptions.defaults().withFp64(true));
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
            final List<double[]> out =
                    TestCluster.parallel(n, r -> sessions.get(r).allReduce(in[r]));
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
