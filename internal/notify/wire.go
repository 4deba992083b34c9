package notify

import (
	"errors"
	"fmt"

	"github.com/edgekit/edgekit/edgeproto"
	"github.com/edgekit/edgekit/fieldmap"
	notifyv1 "github.com/edgekit/edgekit/proto/edgekit/notify/v1"
	"google.golang.org/protobuf/proto"
)

// ErrBadMessage is matched by every error about a message that does not
// follow the protocol (an Update without an object, a Report without an
// Info, an unknown flag).
var ErrBadMessage = errors.New("notify: bad message")

// UpdateOf wraps obj (a *Settings, *Flavor, *Cloudlet, *TrustPolicy, *App,
// *ClusterInst or *AppInst) in an Update. The Update holds obj itself, not
// a copy.
func UpdateOf(action notifyv1.UpdateAction, rev int64, obj proto.Message) (*notifyv1.Update, error) {
	u := &notifyv1.Update{Action: action, Revision: rev}
	switch o := obj.(type) {
	case *edgeproto.Settings:
		u.Object = &notifyv1.Update_Settings{Settings: o}
	case *edgeproto.Flavor:
		u.Object = &notifyv1.Update_Flavor{Flavor: o}
	case *edgeproto.Cloudlet:
		u.Object = &notifyv1.Update_Cloudlet{Cloudlet: o}
	case *edgeproto.TrustPolicy:
		u.Object = &notifyv1.Update_TrustPolicy{TrustPolicy: o}
	case *edgeproto.App:
		u.Object = &notifyv1.Update_App{App: o}
	case *edgeproto.ClusterInst:
		u.Object = &notifyv1.Update_ClusterInst{ClusterInst: o}
	case *edgeproto.AppInst:
		u.Object = &notifyv1.Update_AppInst{AppInst: o}
	case *edgeproto.TrustPolicyException:
		u.Object = &notifyv1.Update_TrustPolicyException{TrustPolicyException: o}
	default:
		return nil, fmt.Errorf("%w: no Update carries a %T", ErrBadMessage, obj)
	}
	return u, nil
}

// ObjectOf returns the object an Update carries.
func ObjectOf(u *notifyv1.Update) (proto.Message, error) {
	var obj proto.Message
	switch o := u.GetObject().(type) {
	case *notifyv1.Update_Settings:
		obj = o.Settings
	case *notifyv1.Update_Flavor:
		obj = o.Flavor
	case *notifyv1.Update_Cloudlet:
		obj = o.Cloudlet
	case *notifyv1.Update_TrustPolicy:
		obj = o.TrustPolicy
	case *notifyv1.Update_App:
		obj = o.App
	case *notifyv1.Update_ClusterInst:
		obj = o.ClusterInst
	case *notifyv1.Update_AppInst:
		obj = o.AppInst
	case *notifyv1.Update_TrustPolicyException:
		obj = o.TrustPolicyException
	}
	if obj == nil || !obj.ProtoReflect().IsValid() {
		return nil, fmt.Errorf("%w: Update without an object", ErrBadMessage)
	}
	return obj, nil
}

// Info is a report's Info: a *CloudletInfo, *ClusterInstInfo or
// *AppInstInfo, or a *TrustPolicyException carrying the states of its
// instances.
type Info interface {
	proto.Message
	FieldSchema() *fieldmap.Schema
	GetKeyString() string
}

// ReportOf builds the Report of info carrying the fields of fm. The Report
// holds info itself.
func ReportOf(seq uint64, info Info, fm *fieldmap.FieldMap) (*notifyv1.Report, error) {
	r := &notifyv1.Report{Seq: seq, Fields: EncodeFields(fm)}
	switch i := info.(type) {
	case *edgeproto.CloudletInfo:
		r.Info = &notifyv1.Report_CloudletInfo{CloudletInfo: i}
	case *edgeproto.ClusterInstInfo:
		r.Info = &notifyv1.Report_ClusterInstInfo{ClusterInstInfo: i}
	case *edgeproto.AppInstInfo:
		r.Info = &notifyv1.Report_AppInstInfo{AppInstInfo: i}
	case *edgeproto.TrustPolicyException:
		r.Info = &notifyv1.Report_TrustPolicyException{TrustPolicyException: i}
	default:
		return nil, fmt.Errorf("%w: no Report carries a %T", ErrBadMessage, info)
	}
	return r, nil
}

// InfoOf returns the Info of a Report and its flags, checked against the
// Info's schema: an unknown flag is an error naming it.
func InfoOf(r *notifyv1.Report) (Info, *fieldmap.FieldMap, error) {
	var info Info
	switch i := r.GetInfo().(type) {
	case *notifyv1.Report_CloudletInfo:
		info = i.CloudletInfo
	case *notifyv1.Report_ClusterInstInfo:
		info = i.ClusterInstInfo
	case *notifyv1.Report_AppInstInfo:
		info = i.AppInstInfo
	case *notifyv1.Report_TrustPolicyException:
		info = i.TrustPolicyException
	}
	if info == nil || !info.ProtoReflect().IsValid() {
		return nil, nil, fmt.Errorf("%w: Report without an Info", ErrBadMessage)
	}
	fm, err := info.FieldSchema().Parse(r.GetFields()...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	return info, fm, nil
}

// EncodeFields renders a FieldMap as the flags of a Report, with their
// list actions ("9:add").
func EncodeFields(fm *fieldmap.FieldMap) []string {
	flags := fm.Fields()
	for i, f := range flags {
		if a := fm.ListAction(f); a != fieldmap.Replace {
			flags[i] = f + ":" + a.String()
		}
	}
	return flags
}

// KindOf names the kind of a message as the store does: its proto name
// ("ClusterInst").
func KindOf(m proto.Message) string { return string(m.ProtoReflect().Descriptor().Name()) }
