/**
 * The application the integration tests submit the way a user does (the shaded jar on {@code --jars},
 * {@code spark-submit}, a standalone cluster of separate JVMs), which checks its sums and prints what it saw.
 */
package org.switchml.it;
