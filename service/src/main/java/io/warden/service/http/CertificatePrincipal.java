package io.warden.service.http;

import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * The principal name a verified client certificate gives (mTLS, {@code tls-client-principal}): its subject's CN, or its
 * first subject alternative name of one kind (dns, uri or email). Jetty has verified the chain against
 * {@code tls-client-ca} before any of this is read.
 */
final class CertificatePrincipal {
    private CertificatePrincipal() {
    }

    /** How to read the principal for the setting's value. */
    static Function<X509Certificate, String> of(String kind) {
        return switch (kind) {
            case "dns" -> c -> san(c, 2);
            case "email" -> c -> san(c, 1);
            case "uri" -> c -> san(c, 6);
            default -> CertificatePrincipal::commonName;
        };
    }

    /** The subject's (last) CN, or null when it has none. */
    static String commonName(X509Certificate certificate) {
        try {
            String cn = null;
            for (Rdn rdn : new LdapName(certificate.getSubjectX500Principal().getName()).getRdns()) {
                if (rdn.getType().equalsIgnoreCase("CN")) {
                    cn = String.valueOf(rdn.getValue());
                }
            }
            return cn;
        } catch (InvalidNameException e) {
            return null;
        }
    }

    /** The first subject alternative name of this type (RFC 5280: 1 email, 2 DNS, 6 URI), or null. */
    private static String san(X509Certificate certificate, int type) {
        try {
            Collection<List<?>> names = certificate.getSubjectAlternativeNames();
            if (names == null) {
                return null;
            }
            for (List<?> name : names) {
                if (name.size() >= 2 && Integer.valueOf(type).equals(name.get(0))) {
                    return String.valueOf(name.get(1));
                }
            }
            return null;
        } catch (CertificateParsingException e) {
            return null;
        }
    }
}
