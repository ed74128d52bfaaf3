package org.switchml.it;

import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The jar users put on {@code --jars}: every class in it lives under {@code org.switchml}, so nothing in it can
 * meet a class of Spark or of the application, and relocation kept the wire names a P4Runtime server expects.
 */
class ShadedJarIT {

    private static Path libraryJar() {
        final String v = System.getProperty("switchml.it.libraryJar");
        assertTrue(v != null && Files.exists(Path.of(v)), "switchml.it.libraryJar = " + v + " does not exist");
        return Path.of(v);
    }

    @Test
    void everyClassIsOurs() throws Exception {
        final List<String> foreign = new ArrayList<>();
        int classes = 0;
        try (JarFile jar = new JarFile(libraryJar().toFile())) {
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                final String name = e.nextElement().getName();
                if (!name.endsWith(".class") || name.startsWith("META-INF/")) {
                    continue;
                }
                classes++;
                if (!name.startsWith("org/switchml/")) {
                    foreign.add(name);
                }
            }
        }
        assertTrue(classes > 1000, "the shaded jar holds only " + classes + " classes");
        assertTrue(foreign.isEmpty(), "classes outside org.switchml in the shaded jar: "
                + foreign.subList(0, Math.min(20, foreign.size())));
    }

    @Test
    void p4RuntimeKeepsItsWireNames() throws Exception {
        // The class is relocated, but the gRPC service name must stay what every P4Runtime server serves.
        try (URLClassLoader loader = new URLClassLoader(new URL[] {libraryJar().toUri().toURL()},
                ClassLoader.getPlatformClassLoader())) {
            final Class<?> grpc = Class.forName("org.switchml.shaded.p4.v1.P4RuntimeGrpc", false, loader);
            assertEquals("p4.v1.P4Runtime", grpc.getField("SERVICE_NAME").get(null));
            final Class<?> write = Class.forName("org.switchml.shaded.p4.v1.P4RuntimeOuterClass$WriteRequest", true,
                    loader);
            final Object descriptor = write.getMethod("getDescriptor").invoke(null);
            assertEquals("p4.v1.WriteRequest", descriptor.getClass().getMethod("getFullName").invoke(descriptor));
        }
    }
}
