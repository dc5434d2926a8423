package io.warden.service.config;

/**
 * A setting that stops start-up. The message is one line that names the setting, says where the
 * value came from (flag, environment variable or config file) and what is allowed, e.g.
 * {@code invalid http-port "70x" (from env WARDEN_HTTP_PORT): expected a port number 0-65535}.
 * {@code Main} prints it as {@code warden: <message>} and exits with status 2.
 */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String setting;

    /**
     * @param setting the setting's name as in its YAML key (e.g. {@code http-port}), or null when the problem is not
     *                about one setting (an unknown flag, an unreadable file)
     */
    public ConfigException(String setting, String message) {
        super(oneLine(message));
        this.setting = setting;
    }

    /** The setting's YAML key ({@code http-port}), or null when the problem is not about one setting. */
    public String setting() {
        return setting;
    }

    private static String oneLine(String message) {
        return message.replaceAll("\\s*[\\r\\n]+\\s*", " ").strip();
    }
}
