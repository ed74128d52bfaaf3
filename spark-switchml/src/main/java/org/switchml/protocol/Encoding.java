package org.switchml.protocol;

/** How a worker maps its values onto int32 payload elements (docs/protocol.md, section 5). */
public enum Encoding {
    /** Plain int32 values; sums wrap modulo 2^32. No exponent exchange. */
    INT32(0),
    /** Block-scaled fixed point, one int32 per element, block exponent agreed through the switch. */
    FP32_BLOCK(1),
    /** Block-scaled fixed point, two int32 lanes (high, low) per element: about 50+ significant bits. */
    FP64_SPLIT(2);

    private final int code;

    Encoding(final int code) {
        this.code = code;
    }

    /** Wire code of this encoding. */
    public int code() {
        return code;
    }

    /** Whether blocks need the look-ahead exponent exchange. */
    public boolean scaled() {
        return this != INT32;
    }

    /** Vector elements carried by a packet of {@code k} int32 lanes. */
    public int elementsPerPacket(final int k) {
        return this == FP64_SPLIT ? k / 2 : k;
    }
}
