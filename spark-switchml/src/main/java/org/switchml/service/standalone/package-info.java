/**
 * The programs that run a shared switch: {@code bin/switchml-switch} (the standalone software switch with its
 * controller and job service) and {@code bin/switchml-controller} (the controller and job service beside a P4
 * switch such as BMv2). Both hold the switch's P4Runtime primary role for their whole life.
 */
package org.switchml.service.standalone;
