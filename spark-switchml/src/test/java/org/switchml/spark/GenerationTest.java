package org.switchml.spark;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.switchml.client.ClientOptions;
import org.switchml.client.JobSession;
import org.switchml.client.SwitchMLClient;
import org.switchml.client.SwitchMLTimeoutException;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobSpec;

/**
 * What a stage retry relies on: once the job is registered under the next generation (the retried
 * stage attempt, with the new secret every registration draws), a late worker of the dead attempt is
 * dropped (BAD_SECRET: its secret is checked before its generation) and gets no result.
 */
class GenerationTest {
    @Test
    void packetsOfTheDeadAttemptAreDropped() {
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                SwitchMLClient zombie = SwitchMLClient.open(
                        ClientOptions.defaults().withFp64(true).withResultTimeoutMs(300));
                SwitchMLClient other = SwitchMLClient.open(ClientOptions.defaults())) {
            final List<InetSocketAddress> workers = List.of(zombie.localAddress(), other.localAddress());
            final JobSpec attempt0 = new JobSpec(77, 0, 64, 8, workers);
            sw.registerJob(attempt0);
            final JobSession dead = zombie.join(attempt0, 0, sw.address());
            sw.registerJob(new JobSpec(77, 1, 64, 8, workers)); // the retried attempt, with a new secret
            assertThrows(SwitchMLTimeoutException.class, () -> dead.allReduce(new double[100]));
            final long dropped = sw.counters(77).drops(DropReason.BAD_SECRET);
            assertTrue(dropped > 0, "drops of the dead attempt: " + dropped);
        }
    }
}
