// Package devtls gives the hosts mutual TLS without any external tooling:
// a local certificate authority kept in a directory, certificates it
// issues, *tls.Config builders for servers and clients that verify each
// other against the authority, and the identity of the peer of a verified
// connection.
//
// # Files
//
// A directory holds the authority and the certificates it issued, in PEM:
//
//	ca.crt, ca.key          the authority (created by OpenCA when absent)
//	<name>.crt, <name>.key  a leaf issued to name (created by CA.Issue when absent)
//	<name>.pem              the same leaf's certificate and key in one file
//
// The directory is created 0700 and every key file (and pair file) 0600.
// Files are created once and reloaded after, so that every process pointed
// at the same directory trusts the same authority; creation takes an
// advisory lock (flock) on the directory, so processes starting together
// do not create two authorities. A leaf is issued again when it has
// expired, expires within a tenth of its validity (or
// LeafOptions.MinRemaining), was issued by another authority, lacks a name
// or address the caller asks for, or, for a caller that renews it
// (LeafOptions.ReplaceLonger, set by CA.Renewer), is valid for longer than
// asked; otherwise its files are left as they are.
//
// Each file is replaced atomically (written beside, renamed), but a
// certificate and its key are two files: a reader between the two renames
// sees a new key and an old certificate. The pair file is replaced in one
// rename, and LoadKeyPair reads it once, so a reader of it never gets a
// mismatched pair; LoadKeyPair reads separate files again until they
// match. A leaf's Common Name is its name unless LeafOptions.CommonName
// says otherwise, so two leaves of one identity for different uses (one
// renewed, one read by software that reloads files on each handshake) can
// have files of their own.
//
// # Renewal
//
// Leaves live a day unless asked otherwise (DefaultLeafValidity). A
// long-running party holds its certificate in a Renewer (CA.Renewer for a
// leaf of the authority, FileRenewer for PEM files made by other means)
// and runs its Start: the leaf is issued again before it expires, or the
// files reloaded when they change, and the bundle's TLS configurations
// present the current certificate on each new handshake (GetCertificate,
// GetClientCertificate) while established connections go on.
//
// # Identity
//
// A leaf's Subject Common Name is the name it was issued to, and the
// identity of a peer is the Common Name of the certificate it presented,
// once verified against the authority (PeerIdentity, PeerFromRequest,
// PeerFromContext). The certificate's URI SANs are returned with it for
// callers that want a structured identity, but the Common Name is the one
// this package vouches for.
//
// Every leaf carries, as subject alternative names, "localhost", 127.0.0.1
// and ::1, the name itself when it is a valid DNS name, and whatever the
// caller adds (LeafOptions). Leaves are valid for both server and client
// authentication, since every host here is both.
//
// Bundle is the material one party needs (its certificate and the pool of
// authorities it trusts), from a dev authority (CA.Bundle) or from PEM files
// made by any other means (LoadBundle); its ServerConfig requires and
// verifies client certificates, its ClientConfig verifies the server.
// Both require TLS 1.3.
package devtls
