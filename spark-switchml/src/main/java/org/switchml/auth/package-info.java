/**
 * Who may program a shared switch: the rack's bearer token (read from a file, checked in constant time on
 * every call) and TLS credentials from PEM files, for the gRPC servers of the control plane (the job service,
 * the standalone switch's P4Runtime server) and their clients. docs/security.md says what this covers.
 */
package org.switchml.auth;
