package io.warden.service.http;

import java.security.cert.X509Certificate;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/** The principal name a verified client certificate gives (mTLS): its subject's CN. */
final class CertificatePrincipal {
    private CertificatePrincipal() {
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
}
