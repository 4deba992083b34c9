// Package notifyv1 is the notify protocol between the controller and a
// CRM (notify.proto): one bidirectional stream per CRM carrying its
// cloudlet's objects down and their Info reports up. Generated, with the
// gRPC service and edgekit's helpers; the controller's side is
// hosts/controller/notify, the CRM's hosts/crm.
package notifyv1
