package org.switchml.service;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate made at test time with the JDK's keytool for the subject alternative names a test
 * gives (each certificate its own, so hostname verification is exercised), written as PEM (the chain and its
 * PKCS#8 key), as a user would give them to the job service.
 *
 * @param cert the certificate, PEM
 * @param key  its private key, PKCS#8 PEM
 */
public record TestCertificates(Path cert, Path key) {

    /**
     * Makes a new key pair and certificate for {@code cn} under {@code dir}, valid for {@code san} (keytool's
     * form, e.g. {@code ip:127.0.0.1,dns:switch.test}).
     */
    public static TestCertificates make(final Path dir, final String cn, final String san)
            throws IOException, InterruptedException, GeneralSecurityException {
        final Path store = dir.resolve(cn + ".p12");
        final String keytool =
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        final Process p = new ProcessBuilder(List.of(
                        keytool,
                        "-genkeypair",
                        "-alias",
                        cn,
                        "-keyalg",
                        "EC",
                        "-groupname",
                        "secp256r1",
                        "-dname",
                        "CN=" + cn,
                        "-ext",
                        "SAN=" + san,
                        "-validity",
                        "2",
                        "-storetype",
                        "PKCS12",
                        "-keystore",
                        store.toString(),
                        "-storepass",
                        "test-pass",
                        "-keypass",
                        "test-pass"))
                .redirectErrorStream(true)
                .start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool failed: " + output);
        }
        final KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, "test-pass".toCharArray());
        }
        final Certificate c = ks.getCertificate(cn);
        final PrivateKey k = (PrivateKey) ks.getKey(cn, "test-pass".toCharArray());
        final Path cert = Files.writeString(dir.resolve(cn + ".crt.pem"), pem("CERTIFICATE", c.getEncoded()));
        final Path key = Files.writeString(dir.resolve(cn + ".key.pem"), pem("PRIVATE KEY", k.getEncoded()));
        return new TestCertificates(cert, key);
    }

    private static String pem(final String type, final byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
