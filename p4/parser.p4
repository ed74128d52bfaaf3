/*
 * Parser and deparser: Ethernet / IPv4 (IHL 5, unfragmented) / UDP to 0xBEE0..0xBEEF /
 * SwitchML header / payload. Anything else stops early and ingress drops it.
 *
 * Parser errors (e.g. a frame shorter than its headers) do not drop the packet in v1model;
 * ingress reads standard_metadata.parser_error and counts MALFORMED.
 */
#ifndef _SWITCHML_PARSER_P4_
#define _SWITCHML_PARSER_P4_

parser SwitchMLParser(packet_in packet,
                      out headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    state start {
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        // Options and non-first fragments would put something else where UDP is expected.
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (4w5, 13w0, IPPROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            SWITCHML_PORT_BASE &&& SWITCHML_PORT_MASK: parse_switchml;
            default: accept;
        }
    }

    state parse_switchml {
        packet.extract(hdr.switchml);
        // Only a datagram of exactly 20 + 4*64 bytes carries a payload we can aggregate;
        // other lengths are left unparsed and classified by ingress (MALFORMED or WRONG_K).
        transition select(hdr.udp.len) {
            SWITCHML_UDP_LEN: parse_payload;
            default: accept;
        }
    }

    state parse_payload {
        packet.extract(hdr.payload);
        transition accept;
    }
}

control SwitchMLDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.switchml);
        packet.emit(hdr.payload);
    }
}

#endif  /* _SWITCHML_PARSER_P4_ */
