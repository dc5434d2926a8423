package io.warden.service;

import io.warden.service.auth.AuthFile;
import io.warden.service.auth.AuthFileException;
import io.warden.service.config.ConfigLoader;
import io.warden.service.http.Pem;
import io.warden.service.zk.ZkSecurity;

import java.util.Map;

/**
 * The gateway's settings loader: {@link ConfigLoader}, which checks values, with the checks of what the settings name
 * made by the parts that will read it — the HTTPS certificate and client CA (the HTTP edge), ZooKeeper's password file
 * and stores (the ZooKeeper plumbing), the auth file (authentication). A bad file stops start-up with one line naming
 * the setting, before anything is started.
 */
public final class Settings {
    private Settings() {
    }

    /** The loader for this process's environment. */
    public static ConfigLoader loader() {
        return loader(System.getenv());
    }

    /** The loader for {@code env}. */
    public static ConfigLoader loader(Map<String, String> env) {
        return new ConfigLoader(env).checking(new ConfigLoader.FileChecks(
                c -> {
                    Pem.keyStore(c.tlsCert(), c.tlsKey());
                    if (c.tlsClientCa() != null) {
                        Pem.trustStore(c.tlsClientCa());
                    }
                },
                ZkSecurity::checkPassword,
                ZkSecurity::checkStores,
                c -> {
                    try {
                        AuthFile.read(c.authFile());
                    } catch (AuthFileException e) {
                        throw new IllegalArgumentException(e.getMessage(), e);
                    }
                }));
    }
}
