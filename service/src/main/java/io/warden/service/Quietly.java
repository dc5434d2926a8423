package io.warden.service;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/** Runs a step of a stop and goes on whatever it throws (logged at debug): a stop never stops half-way. */
final class Quietly {
    private static final Logger log = LoggerFactory.getLogger(Quietly.class);

    private Quietly() {
    }

    /** A step of a stop: closing a client, a server, a file. */
    interface Step {
        void run() throws IOException;
    }

    static void run(Step step) {
        try {
            step.run();
        } catch (Exception | Error e) {
            log.debug("while stopping: {}", e.toString());
        }
    }
}
