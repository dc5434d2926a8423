package io.warden.service.session;

/**
 * What an adoption pass did: records it took over (or found its own), and records it could not read or write, which a
 * later pass must try again (the leader then does not skip its next periodic pass).
 */
public record AdoptionTally(int adopted, int failed) {
    static final AdoptionTally NONE = new AdoptionTally(0, 0);

    AdoptionTally plus(AdoptionTally other) {
        return new AdoptionTally(adopted + other.adopted, failed + other.failed);
    }
}
