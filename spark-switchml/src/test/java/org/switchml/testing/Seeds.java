package org.switchml.testing;

/** Test seeds: fixed by default, overridable with -Dswitchml.test.seed, always printed. */
public final class Seeds {
    private Seeds() {
    }

    /** The seed for {@code test}; prints it so a failure can be replayed. */
    public static long seed(final String test, final long defaultSeed) {
        final String prop = System.getProperty("switchml.test.seed");
        final long seed = prop == null ? defaultSeed : Long.parseLong(prop);
        System.out.println("[seed] " + test + " seed=" + seed + " (replay with -Dswitchml.test.seed=" + seed + ")");
        return seed;
    }
}
