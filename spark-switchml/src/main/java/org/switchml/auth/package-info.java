/**
 * Who may program a shared switch: bearer tokens (read from files private to their owner, checked in constant
 * time on every call; a server may accept one per tenant and tells its service which tenant called) and TLS
 * credentials from PEM files, for the gRPC servers of the control plane (the job service, the standalone
 * switch's P4Runtime server) and their clients. docs/security.md says what this covers.
 */
package org.switchml.auth;
