package org.switchml.spark.registrar;

/**
 * The job ids a registrar may use: {@code base .. base + count - 1}. A shared switch's job service gives each
 * application its own range, so two applications never pick the same id.
 *
 * @param base  first id
 * @param count how many (at least 1)
 */
public record JobIds(int base, int count) {
    /** Any id below 2^31 (a switch of the driver's own). */
    public static final JobIds ANY = new JobIds(0, Integer.MAX_VALUE);

    public JobIds {
        if (base < 0 || count < 1 || (long) base + count > (1L << 31)) {
            throw new IllegalArgumentException("bad job id range: base " + base + ", count " + count);
        }
    }

    /** The {@code n}-th id of the range, wrapping around. */
    public int id(final long n) {
        return base + (int) Math.floorMod(n, (long) count);
    }
}
