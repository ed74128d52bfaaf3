package org.switchml.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobSpec;
import org.switchml.testing.TestCluster;

/**
 * Sessions of one job never mix: a registration (job id, generation, secret) admits one
 * session per worker, a new registration is a fresh epoch the switch recognises, and what the switch does
 * with a spec it already has.
 */
class SessionIdentityTest {
    private static SoftwareSwitch sw;

    @BeforeAll
    static void start() {
        sw = SoftwareSwitch.start(SwitchOptions.loopback(2));
    }

    @AfterAll
    static void stop() {
        sw.close();
    }

    private static List<SwitchMLClient> open(final int n, final ClientOptions options) {
        final List<SwitchMLClient> out = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            out.add(SwitchMLClient.open(options));
        }
        return out;
    }

    private static List<InetSocketAddress> endpoints(final List<SwitchMLClient> clients) {
        return clients.stream().map(SwitchMLClient::localAddress).toList();
    }

    private static void closeAll(final List<SwitchMLClient> clients) {
        clients.forEach(SwitchMLClient::close);
    }

    /**
     * The reported case: a second {@code join} of the same JobSpec on the same clients used to start a new
     * session that the switch answered with the first session's stored results ({10,20} and {100,200} both
     * came back as the first call's [2.0, 4.0]). Now the second join is refused, and a new registration of
     * the job gives the exact sum.
     */
    @Test
    void aSecondJoinOfTheSameRegistrationIsRefusedAndANewRegistrationIsExact() {
        final List<SwitchMLClient> clients = open(2, ClientOptions.defaults());
        try {
            final JobSpec spec = new JobSpec(901, 0, 64, 8, endpoints(clients));
            sw.registerJob(spec);
            final List<JobSession> first = List.of(
                    clients.get(0).join(spec, 0, sw.address()), clients.get(1).join(spec, 1, sw.address()));
            final List<float[]> one = TestCluster.parallel(2, r -> first.get(r).allReduce(new float[] {1, 2}));
            assertArrayEquals(new float[] {2, 4}, one.get(0));
            assertArrayEquals(new float[] {2, 4}, one.get(1));

            final IllegalStateException refused = assertThrows(
                    IllegalStateException.class, () -> clients.get(0).join(spec, 0, sw.address()));
            assertTrue(
                    refused.getMessage().contains("job 901")
                            && refused.getMessage().contains("already joined")
                            && refused.getMessage().contains("Register the job again"),
                    refused.getMessage());

            // A new registration of the same job and generation: a new secret, a fresh epoch.
            final JobSpec again = spec.withSecret(spec.secret() + 1);
            assertTrue(sw.registerJob(again));
            final List<JobSession> second = List.of(
                    clients.get(0).join(again, 0, sw.address()), clients.get(1).join(again, 1, sw.address()));
            final float[][] in = {{10, 20}, {100, 200}};
            final List<float[]> two = TestCluster.parallel(2, r -> second.get(r).allReduce(in[r]));
            assertArrayEquals(new float[] {110, 220}, two.get(0));
            assertArrayEquals(new float[] {110, 220}, two.get(1));
        } finally {
            closeAll(clients);
        }
    }

    /**
     * A re-registration while a session is live: the old session's packets carry the old secret and are
     * dropped as BAD_SECRET, so its next call fails within the result timeout with an error that says why,
     * while the new session (same sockets) is exact.
     */
    @Test
    void aReRegistrationEndsTheOldSessionWithAClearErrorWithinTheBound() {
        final long timeoutMs = 400;
        final List<SwitchMLClient> clients = open(2, ClientOptions.defaults().withResultTimeoutMs(timeoutMs));
        try {
            final JobSpec old = new JobSpec(902, 3, 64, 4, endpoints(clients));
            sw.registerJob(old);
            final List<JobSession> stale = List.of(
                    clients.get(0).join(old, 0, sw.address()), clients.get(1).join(old, 1, sw.address()));
            TestCluster.parallel(2, r -> stale.get(r).allReduce(new int[] {r + 1, 7}));

            final JobSpec fresh = new JobSpec(902, 3, 64, 4, endpoints(clients)); // a new secret
            assertNotEquals(old.secret(), fresh.secret());
            sw.registerJob(fresh);
            final long t0 = System.nanoTime();
            final SwitchMLTimeoutException e = assertThrows(
                    SwitchMLTimeoutException.class, () -> stale.get(0).allReduce(new int[] {5, 5}));
            final long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(e.getMessage().contains("job 902") && e.getMessage().contains("new secret"), e.getMessage());
            assertTrue(ms < timeoutMs + 5_000, "failed after " + ms + " ms");
            assertTrue(
                    sw.counters(902).drops(DropReason.BAD_SECRET) > 0,
                    sw.counters(902).toString());

            final List<JobSession> now = List.of(
                    clients.get(0).join(fresh, 0, sw.address()), clients.get(1).join(fresh, 1, sw.address()));
            final List<int[]> sum = TestCluster.parallel(2, r -> now.get(r).allReduce(new int[] {r + 1, 40}));
            assertArrayEquals(new int[] {3, 80}, sum.get(0));
            assertArrayEquals(new int[] {3, 80}, sum.get(1));
        } finally {
            closeAll(clients);
        }
    }

    /**
     * Registering the installed spec again is a no-op that keeps the live session's slot state (a reset
     * could strand a worker whose result was lost); another spec under the same generation and secret is
     * refused, since its packets could not be told apart from the installed one's.
     */
    @Test
    void theInstalledSpecAgainIsANoOpAndAnotherSpecUnderTheSameSecretIsRefused() {
        final List<SwitchMLClient> clients = open(2, ClientOptions.defaults());
        try {
            final JobSpec spec = new JobSpec(903, 1, 0x7A5C3E91, 64, 4, endpoints(clients));
            assertTrue(sw.registerJob(spec));
            final List<JobSession> s = List.of(
                    clients.get(0).join(spec, 0, sw.address()), clients.get(1).join(spec, 1, sw.address()));
            TestCluster.parallel(2, r -> s.get(r).allReduce(new int[] {1, 2, 3}));
            final long in = sw.counters(903).packetsIn();
            assertFalse(sw.registerJob(new JobSpec(903, 1, spec.secret(), 64, 4, endpoints(clients))));
            assertEquals(in, sw.counters(903).packetsIn(), "counters (and slots) kept");
            final List<int[]> sum = TestCluster.parallel(2, r -> s.get(r).allReduce(new int[] {r, 10, 100}));
            assertArrayEquals(new int[] {1, 20, 200}, sum.get(0));

            final IllegalArgumentException clash = assertThrows(
                    IllegalArgumentException.class,
                    () -> sw.registerJob(new JobSpec(903, 1, spec.secret(), 64, 8, endpoints(clients))));
            assertTrue(clash.getMessage().contains("same secret"), clash.getMessage());
            assertFalse(clash.getMessage().contains(Integer.toString(spec.secret())), "the secret is not printed");
        } finally {
            closeAll(clients);
        }
    }

    /**
     * Shrunk by SessionModelTest from a switch that ignored the secret (a mutant): the job registered and
     * joined, then registered twice more under the same generation. Every call of the first sessions must
     * fail; without the secret check they completed on the fresh slots of the newest registration.
     */
    @Test
    void callsOfSessionsOfAnEarlierRegistrationUnderTheSameGenerationFail() {
        final List<SwitchMLClient> clients = open(2, ClientOptions.defaults().withResultTimeoutMs(300));
        try {
            final JobSpec first = new JobSpec(904, 0, 64, 4, endpoints(clients));
            sw.registerJob(first);
            final List<JobSession> old = List.of(
                    clients.get(0).join(first, 0, sw.address()), clients.get(1).join(first, 1, sw.address()));
            sw.registerJob(first.withSecret(first.secret() + 1));
            sw.registerJob(first.withSecret(first.secret() + 2));
            final List<Object> outcomes = TestCluster.parallel(2, r -> {
                try {
                    return old.get(r).allReduce(new int[] {r});
                } catch (final SwitchMLTimeoutException e) {
                    return e;
                }
            });
            assertTrue(outcomes.get(0) instanceof SwitchMLTimeoutException, String.valueOf(outcomes.get(0)));
            assertTrue(outcomes.get(1) instanceof SwitchMLTimeoutException, String.valueOf(outcomes.get(1)));
            assertTrue(
                    sw.counters(904).drops(DropReason.BAD_SECRET) >= 2,
                    sw.counters(904).toString());
        } finally {
            closeAll(clients);
        }
    }

    /**
     * Found while writing SessionModelTest: a worker whose call timed out may already have contributed to it,
     * so a late worker's call of the same number completes, with the exact sum of that call's inputs; the
     * next call cannot complete (the first worker's session is broken) and fails within the bound.
     */
    @Test
    void aLateWorkerCompletesTheSameCallWithTheContributionOfAWorkerThatGaveUp() {
        final List<SwitchMLClient> clients = open(2, ClientOptions.defaults().withResultTimeoutMs(300));
        try {
            final JobSpec spec = new JobSpec(905, 0, 64, 4, endpoints(clients));
            sw.registerJob(spec);
            final JobSession early = clients.get(0).join(spec, 0, sw.address());
            assertThrows(SwitchMLTimeoutException.class, () -> early.allReduce(new int[] {5, 6}));
            final JobSession late = clients.get(1).join(spec, 1, sw.address());
            assertArrayEquals(new int[] {12, 14}, late.allReduce(new int[] {7, 8}));
            assertThrows(SwitchMLTimeoutException.class, () -> late.allReduce(new int[] {1, 1}));
        } finally {
            closeAll(clients);
        }
    }
}
