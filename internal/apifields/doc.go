// Package apifields says which fields of the controller's objects users may
// set, in one table that the controller (update and create validation) and
// edgectl (which flags it offers) both read.
//
// Every field of an object has one Access:
//
//   - Key: the object key. It names the object: set on create, used to find
//     the object on update and delete, never changed.
//   - CreateOnly: set on create, never changed afterwards (what the object
//     runs on, or what it is: a cloudlet's platform type, a cluster's
//     cloudlet).
//   - Settable: set on create and changed by update.
//   - Owned: written by the controller or a resource manager (state, errors,
//     timestamps, what the platform created); never by users.
//
// A field inherits the Access of its nearest ancestor listed in the table;
// a field with no listed ancestor is Settable. The Info twins (CloudletInfo,
// ClusterInstInfo, AppInstInfo) are Owned as a whole: only resource managers
// write them.
//
// CheckCreate and CheckUpdate turn the table into errors that name the
// offending field; the errors match ErrNotSettable.
package apifields
