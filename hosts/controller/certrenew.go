package controller

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/edgekit/edgekit/internal/devtls"
	"github.com/edgekit/edgekit/internal/store"
	rmv1 "github.com/edgekit/edgekit/proto/edgekit/rm/v1"
)

// CertRenewalKey is the etcd key through which the controller tells the
// CCRM replicas of region to renew their certificates of the development
// authority: its value is a CertRenewal (JSON). Replicas read it when they
// start and watch it after; the controller alone writes it.
func CertRenewalKey(region string) string {
	return store.Root + region + "/" + certRenewalName
}

const certRenewalName = "ccrm/cert-renewal"

// CertRenewal asks every CCRM replica whose certificate expires before
// ExpiringBefore to get one valid past it.
type CertRenewal struct {
	ExpiringBefore time.Time `json:"expiring_before"`
}

// ParseCertRenewal decodes the value of CertRenewalKey.
func ParseCertRenewal(v []byte) (CertRenewal, error) {
	var r CertRenewal
	if err := json.Unmarshal(v, &r); err != nil {
		return CertRenewal{}, fmt.Errorf("%s: %w", certRenewalName, err)
	}
	if r.ExpiringBefore.IsZero() {
		return CertRenewal{}, fmt.Errorf("%s: no expiring_before", certRenewalName)
	}
	return r, nil
}

// tellCCRMsToRenew runs until ctx ends: every quarter of validity it asks
// the CCRM replicas to renew the certificates that expire within half of
// validity from now, so that a replica's certificate is renewed at about
// half its life and never within a quarter of its expiry while the
// controller runs.
//
// It never writes at the controller's start: the first request is due a
// quarter of validity after the last stored one, or after the start when
// there is none or it is overdue (replicas renew on their own schedule
// meanwhile). A write as the controller starts moves the store's revision
// past what some of its caches have seen with no event of theirs, while
// others start watching past it, and a Show waiting for a cache to catch
// up then depends on a progress notification that etcd sends no watch
// stream while one of its watchers starts past the current revision: on
// a quiet region, nothing came before the Show's deadline. After that, it
// writes the request only when it is due.
func tellCCRMsToRenew(ctx context.Context, cli *clientv3.Client, region string, validity time.Duration, log *slog.Logger) {
	key := CertRenewalKey(region)
	interval := max(validity/4, 100*time.Millisecond)
	for first := true; ; first = false {
		wait, wrote, err := askCCRMsToRenew(ctx, cli, key, validity, interval, !first)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("telling the CCRM replicas to renew their certificates", slog.Any("err", err))
			wait = min(interval, 10*time.Second)
		case err == nil && !wrote:
			log.Debug("the CCRM replicas' renewal request is not due", slog.Bool("start", first), slog.Duration("next_in", wait))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// askCCRMsToRenew writes a renewal request at key when the stored one is
// due (a quarter of validity old, unreadable, or absent) and write is set;
// it returns how long to wait before looking again (interval after a
// write, or when the request is due but was not written) and whether it
// wrote.
func askCCRMsToRenew(ctx context.Context, cli *clientv3.Client, key string, validity, interval time.Duration, write bool) (time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil {
		return 0, false, err
	}
	now := time.Now()
	if len(resp.Kvs) == 1 {
		// A request written at t names t+validity/2; the next one is due
		// a quarter of validity after it.
		if cur, err := ParseCertRenewal(resp.Kvs[0].Value); err == nil {
			due := cur.ExpiringBefore.Add(-validity / 4)
			if due.After(now) && due.Sub(now) <= interval {
				return due.Sub(now), false, nil
			}
		}
	}
	if !write {
		return interval, false, nil
	}
	v, err := json.Marshal(CertRenewal{ExpiringBefore: now.Add(validity / 2).UTC()})
	if err != nil {
		return 0, false, err
	}
	if _, err := cli.Put(ctx, key, string(v)); err != nil {
		return 0, false, err
	}
	return interval, true, nil
}

// devServerTLS returns the controller's server configuration and the Renewer of its
// certificate: it presents the current "controller" certificate (valid
// for validity, DefaultLeafValidity when zero) and verifies client
// certificates when given, since users authenticate by token and resource
// managers by certificate.
func devServerTLS(ca *devtls.CA, validity time.Duration, log *slog.Logger) (*tls.Config, *devtls.Renewer, error) {
	r, err := ca.Renewer(devControllerName, devtls.LeafOptions{Validity: validity}, log)
	if err != nil {
		return nil, nil, err
	}
	cfg := r.Bundle(ca.Pool()).ServerConfig()
	cfg.ClientAuth = tls.VerifyClientCertIfGiven
	return cfg, r, nil
}

// RenewCertificateMethod is the full name of the method through which a
// host renews its certificate of the development authority: it
// authenticates by the caller's client certificate, not by a token.
const RenewCertificateMethod = rmv1.CertificateService_RenewCertificate_FullMethodName

// certService renews certificates of the development authority for the
// identity of the caller's verified client certificate only.
type certService struct {
	rmv1.UnimplementedCertificateServiceServer
	ca       *devtls.CA
	validity time.Duration
	log      *slog.Logger
}

var _ rmv1.CertificateServiceServer = (*certService)(nil)

func (s *certService) RenewCertificate(ctx context.Context, req *rmv1.RenewCertificateRequest) (*rmv1.RenewCertificateResponse, error) {
	id, err := devtls.PeerFromContext(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Unauthenticated, "renewing a certificate needs the connection to present the current one, of the development authority: %v", err)
	}
	if len(req.GetCsr()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "csr is empty: want a PKCS#10 certificate request (DER) naming the caller's certificate's Common Name")
	}
	c, err := s.ca.RenewFor(id.Certificate, req.GetCsr(), s.validity)
	switch {
	case errors.Is(err, devtls.ErrNotOwnIdentity):
		return nil, status.Error(codes.PermissionDenied, err.Error())
	case errors.Is(err, devtls.ErrInvalidFile), errors.Is(err, devtls.ErrInvalidName):
		return nil, status.Error(codes.InvalidArgument, err.Error())
	case err != nil:
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	s.log.Info("certificate renewed for its holder", slog.String("name", id.Name), slog.Time("not_after", c.NotAfter))
	return &rmv1.RenewCertificateResponse{Certificate: c.Raw}, nil
}
