/**
 * The settings of spark-switchml: every {@code spark.switchml.*} key in one typed registry
 * ({@link org.switchml.spark.config.SwitchMLConfig}, which also writes docs/configuration.md), and how a
 * worker host setting resolves on an executor. Knows no other Spark room.
 */
package org.switchml.spark.config;
