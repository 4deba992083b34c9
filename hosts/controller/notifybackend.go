package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	"github.com/edgekit/edgekit/hosts/controller/notify"
	"google.golang.org/protobuf/proto"
)

// NotifyBackend returns the controller as the backend of the CRMs' notify
// server (package notify): access keys are checked with VerifyAccessKey,
// and reports applied with ApplyInfo as coming from the CRM of the
// stream's cloudlet, so that a report on another cloudlet's object is
// refused.
func (c *Controller) NotifyBackend() notify.Backend { return notifyBackend{c} }

type notifyBackend struct{ c *Controller }

var _ notify.Backend = notifyBackend{}

func (b notifyBackend) VerifyAccessKey(ctx context.Context, cloudlet *edgeproto.CloudletKey, key string) error {
	err := b.c.VerifyAccessKey(ctx, cloudlet, key)
	if errors.Is(err, ErrBadAccessKey) {
		return fmt.Errorf("%w: %w", notify.ErrBadAccessKey, err)
	}
	return err
}

func (b notifyBackend) ApplyReport(ctx context.Context, cloudlet *edgeproto.CloudletKey, info proto.Message, fm *fieldmap.FieldMap) error {
	err := b.c.ApplyInfo(ctx, Reporter{Cloudlet: cloudlet}, info, fm)
	if err != nil && isVerdict(err) {
		return fmt.Errorf("%w: %w", notify.ErrRejected, err)
	}
	return err
}
