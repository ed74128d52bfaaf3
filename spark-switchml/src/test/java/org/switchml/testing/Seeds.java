package org.switchml.testing;

/** Test seeds: fixed or fresh per run, overridable with -Dswitchml.test.seed, always printed. */
public final class Seeds {
    private Seeds() {}

    /** The seed for {@code test}; prints it so a failure can be replayed. */
    public static long seed(final String test, final long defaultSeed) {
        final String prop = System.getProperty("switchml.test.seed");
        final long seed = prop == null ? defaultSeed : Long.parseLong(prop);
        System.out.println("[seed] " + test + " seed=" + seed + " (replay with -Dswitchml.test.seed=" + seed + ")");
        return seed;
    }

    /**
     * A seed for {@code test} that differs from run to run (so repeated runs explore new cases) unless
     * -Dswitchml.test.seed pins it; printed, so a failure can be replayed.
     */
    public static long perRun(final String test) {
        return seed(test, System.nanoTime() ^ System.currentTimeMillis() * 0x9E37_79B9_7F4A_7C15L);
    }
}
