/*
 * IPv4 header checksum. Results rewrite the IPv4 addresses, so the checksum is recomputed
 * on the way out. UDP checksums are not computed: results carry 0 (allowed for IPv4).
 */
#ifndef _SWITCHML_CHECKSUM_P4_
#define _SWITCHML_CHECKSUM_P4_

control SwitchMLVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        // A mismatch sets standard_metadata.checksum_error; ingress counts it as MALFORMED.
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control SwitchMLComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

#endif  /* _SWITCHML_CHECKSUM_P4_ */
