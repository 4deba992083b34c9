// Package edgeproto holds the edge-cloud objects generated from
// proto/edgeproto/v1 (Cloudlet, ClusterInst, App, AppInst, their Info
// twins, Flavor, TrustPolicy, Settings, StatusInfo, TrackedState...) and a
// few hand-written helpers over them:
//
//   - progress of a change on StatusInfo (SetTask, SetStep, Render...);
//   - the TrackedState transitions a controller accepts from an engine
//     (AcceptsInfoState, CheckInfoState);
//   - classification of states and overrides (IsTransientState,
//     IsDeleteState, IgnoresCRM...).
//
// The helpers never panic on nil or unknown values and keep no state.
package edgeproto
