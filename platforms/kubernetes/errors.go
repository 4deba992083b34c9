package kubernetes

import (
	"errors"

	"github.com/edgekit/edgekit/executor"
)

// ErrAccess is matched by errors about the cloudlet's credentials: a
// missing or unusable kubeconfig, an unreachable API server.
var ErrAccess = errors.New("kubernetes access")

// ErrForbidden is matched by the error of InitCloudlet when the
// credentials lack a permission the platform needs; the error names each
// missing verb and resource.
var ErrForbidden = errors.New("missing kubernetes permissions")

// ErrFenced is matched by the error of a write refused because the object
// records a newer fence than the caller's: a newer claim holder wrote it,
// so the caller's claim is stale. It is executor.ErrFenced, which every
// platform that records fences returns.
var ErrFenced = executor.ErrFenced

// ErrPodFailed is matched by the error of a create or update whose pods
// cannot run; the error carries the cluster's reason (FailedScheduling,
// ImagePullBackOff, CrashLoopBackOff...).
var ErrPodFailed = errors.New("pods cannot run")

// ErrRollout is matched by the error of a rollout the cluster reports
// stuck (a Deployment condition such as ProgressDeadlineExceeded).
var ErrRollout = errors.New("rollout failed")
