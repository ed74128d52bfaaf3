package org.switchml.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A switch of one token serves one tenant: its share and its sessions are the switch's own. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class QuotasTest {
    @Test
    void oneTokenHasNoShareAndEverySessionSeveralTokensKeepTheirs() {
        final Quotas one = Quotas.DEFAULT.forTenants(1);
        assertEquals(100, one.tokenSharePercent());
        assertEquals(Quotas.DEFAULT.sessions(), one.sessionsPerToken());
        assertEquals(Quotas.DEFAULT.slotsPerJob(), one.slotsPerJob(), "per-job quotas still apply");
        assertEquals(Quotas.DEFAULT.jobsPerSession(), one.jobsPerSession());
        assertEquals(Quotas.DEFAULT.bytes(), one.bytes());
        assertSame(Quotas.DEFAULT, Quotas.DEFAULT.forTenants(2));
        assertEquals(50, Quotas.DEFAULT.forTenants(3).tokenSharePercent());
        assertEquals(16, Quotas.DEFAULT.forTenants(3).sessionsPerToken());
    }
}
