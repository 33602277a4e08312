
æ
 api/admission/v1/generated.protoapi.admission.v1%api/authentication/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"´
AdmissionRequest
uid (	RuidC
kind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRkindO
resource (23.apimachinery.pkg.apis.meta.v1.GroupVersionResourceRresource 
subResource (	RsubResourceQ
requestKind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRrequestKind]
requestResource (23.apimachinery.pkg.apis.meta.v1.GroupVersionResourceRrequestResource.
requestSubResource (	RrequestSubResource
name (	Rname
	namespace (	R	namespace
	operation (	R	operation;
userInfo (2.api.authentication.v1.UserInfoRuserInfo>
object	 (2&.apimachinery.pkg.runtime.RawExtensionRobjectD
	oldObject
 (2&.apimachinery.pkg.runtime.RawExtensionR	oldObject
dryRun (RdryRun@
options (2&.apimachinery.pkg.runtime.RawExtensionRoptions"˙
AdmissionResponse
uid (	Ruid
allowed (Rallowed=
status (2%.apimachinery.pkg.apis.meta.v1.StatusRstatus
patch (Rpatch
	patchType (	R	patchTypee
auditAnnotations (29.api.admission.v1.AdmissionResponse.AuditAnnotationsEntryRauditAnnotations
warnings (	RwarningsC
AuditAnnotationsEntry
key (	Rkey
value (	Rvalue:8"ê
AdmissionReview<
request (2".api.admission.v1.AdmissionRequestRrequest?
response (2#.api.admission.v1.AdmissionResponseRresponseBZk8s.io/api/admission/v1
‹
%api/admission/v1beta1/generated.protoapi.admission.v1beta1%api/authentication/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"´
AdmissionRequest
uid (	RuidC
kind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRkindO
resource (23.apimachinery.pkg.apis.meta.v1.GroupVersionResourceRresource 
subResource (	RsubResourceQ
requestKind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRrequestKind]
requestResource (23.apimachinery.pkg.apis.meta.v1.GroupVersionResourceRrequestResource.
requestSubResource (	RrequestSubResource
name (	Rname
	namespace (	R	namespace
	operation (	R	operation;
userInfo (2.api.authentication.v1.UserInfoRuserInfo>
object	 (2&.apimachinery.pkg.runtime.RawExtensionRobjectD
	oldObject
 (2&.apimachinery.pkg.runtime.RawExtensionR	oldObject
dryRun (RdryRun@
options (2&.apimachinery.pkg.runtime.RawExtensionRoptions"ˇ
AdmissionResponse
uid (	Ruid
allowed (Rallowed=
status (2%.apimachinery.pkg.apis.meta.v1.StatusRstatus
patch (Rpatch
	patchType (	R	patchTypej
auditAnnotations (2>.api.admission.v1beta1.AdmissionResponse.AuditAnnotationsEntryRauditAnnotations
warnings (	RwarningsC
AuditAnnotationsEntry
key (	Rkey
value (	Rvalue:8"ö
AdmissionReviewA
request (2'.api.admission.v1beta1.AdmissionRequestRrequestD
response (2(.api.admission.v1beta1.AdmissionResponseRresponseBZk8s.io/api/admission/v1beta1
¶0
,api/admissionregistration/v1/generated.protoapi.admissionregistration.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"M
AuditAnnotation
key (	Rkey(
valueExpression (	RvalueExpression"I
ExpressionWarning
fieldRef (	RfieldRef
warning (	Rwarning"D
MatchCondition
name (	Rname

expression (	R
expression"¨
MatchResourcesZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelectorT
objectSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRobjectSelector[
resourceRules (25.api.admissionregistration.v1.NamedRuleWithOperationsRresourceRulesi
excludeResourceRules (25.api.admissionregistration.v1.NamedRuleWithOperationsRexcludeResourceRules 
matchPolicy (	RmatchPolicy" 
MutatingWebhook
name (	RnameU
clientConfig (21.api.admissionregistration.v1.WebhookClientConfigRclientConfigF
rules (20.api.admissionregistration.v1.RuleWithOperationsRrules$
failurePolicy (	RfailurePolicy 
matchPolicy	 (	RmatchPolicyZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelectorT
objectSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRobjectSelector 
sideEffects (	RsideEffects&
timeoutSeconds (RtimeoutSeconds8
admissionReviewVersions (	RadmissionReviewVersions.
reinvocationPolicy
 (	RreinvocationPolicyV
matchConditions (2,.api.admissionregistration.v1.MatchConditionRmatchConditions"∞
MutatingWebhookConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataI
Webhooks (2-.api.admissionregistration.v1.MutatingWebhookRWebhooks"π
 MutatingWebhookConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataP
items (2:.api.admissionregistration.v1.MutatingWebhookConfigurationRitems"°
NamedRuleWithOperations$
resourceNames (	RresourceNames`
ruleWithOperations (20.api.admissionregistration.v1.RuleWithOperationsRruleWithOperations"?
	ParamKind

apiVersion (	R
apiVersion
kind (	Rkind"¿
ParamRef
name (	Rname
	namespace (	R	namespaceH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
parameterNotFoundAction (	RparameterNotFoundAction"z
Rule
	apiGroups (	R	apiGroups 
apiVersions (	RapiVersions
	resources (	R	resources
scope (	Rscope"l
RuleWithOperations

operations (	R
operations6
rule (2".api.admissionregistration.v1.RuleRrule"l
ServiceReference
	namespace (	R	namespace
name (	Rname
path (	Rpath
port (Rport"o
TypeChecking_
expressionWarnings (2/.api.admissionregistration.v1.ExpressionWarningRexpressionWarnings"ä
ValidatingAdmissionPolicyE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataO
spec (2;.api.admissionregistration.v1.ValidatingAdmissionPolicySpecRspecU
status (2=.api.admissionregistration.v1.ValidatingAdmissionPolicyStatusRstatus"¡
 ValidatingAdmissionPolicyBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataV
spec (2B.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpecRspec"¡
$ValidatingAdmissionPolicyBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataT
items (2>.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingRitems"é
$ValidatingAdmissionPolicyBindingSpec

policyName (	R
policyNameB
paramRef (2&.api.admissionregistration.v1.ParamRefRparamRefT
matchResources (2,.api.admissionregistration.v1.MatchResourcesRmatchResources,
validationActions (	RvalidationActions"≥
ValidatingAdmissionPolicyListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataM
items (27.api.admissionregistration.v1.ValidatingAdmissionPolicyRitems"´
ValidatingAdmissionPolicySpecE
	paramKind (2'.api.admissionregistration.v1.ParamKindR	paramKindX
matchConstraints (2,.api.admissionregistration.v1.MatchResourcesRmatchConstraintsJ
validations (2(.api.admissionregistration.v1.ValidationRvalidations$
failurePolicy (	RfailurePolicyY
auditAnnotations (2-.api.admissionregistration.v1.AuditAnnotationRauditAnnotationsV
matchConditions (2,.api.admissionregistration.v1.MatchConditionRmatchConditionsD
	variables (2&.api.admissionregistration.v1.VariableR	variables"Î
ValidatingAdmissionPolicyStatus.
observedGeneration (RobservedGenerationN
typeChecking (2*.api.admissionregistration.v1.TypeCheckingRtypeCheckingH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"ú
ValidatingWebhook
name (	RnameU
clientConfig (21.api.admissionregistration.v1.WebhookClientConfigRclientConfigF
rules (20.api.admissionregistration.v1.RuleWithOperationsRrules$
failurePolicy (	RfailurePolicy 
matchPolicy	 (	RmatchPolicyZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelectorT
objectSelector
 (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRobjectSelector 
sideEffects (	RsideEffects&
timeoutSeconds (RtimeoutSeconds8
admissionReviewVersions (	RadmissionReviewVersionsV
matchConditions (2,.api.admissionregistration.v1.MatchConditionRmatchConditions"¥
ValidatingWebhookConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
Webhooks (2/.api.admissionregistration.v1.ValidatingWebhookRWebhooks"Ω
"ValidatingWebhookConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataR
items (2<.api.admissionregistration.v1.ValidatingWebhookConfigurationRitems"å

Validation

Expression (	R
Expression
message (	Rmessage
reason (	Rreason,
messageExpression (	RmessageExpression">
Variable
Name (	RName

Expression (	R
Expression"ç
WebhookClientConfig
url (	RurlH
service (2..api.admissionregistration.v1.ServiceReferenceRservice
caBundle (RcaBundleB%Z#k8s.io/api/admissionregistration/v1
◊+
2api/admissionregistration/v1alpha1/generated.proto"api.admissionregistration.v1alpha1,api/admissionregistration/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"4
ApplyConfiguration

expression (	R
expression"M
AuditAnnotation
key (	Rkey(
valueExpression (	RvalueExpression"I
ExpressionWarning
fieldRef (	RfieldRef
warning (	Rwarning"+
	JSONPatch

expression (	R
expression"D
MatchCondition
name (	Rname

expression (	R
expression"∏
MatchResourcesZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelectorT
objectSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRobjectSelectora
resourceRules (2;.api.admissionregistration.v1alpha1.NamedRuleWithOperationsRresourceRuleso
excludeResourceRules (2;.api.admissionregistration.v1alpha1.NamedRuleWithOperationsRexcludeResourceRules 
matchPolicy (	RmatchPolicy"µ
MutatingAdmissionPolicyE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataS
spec (2?.api.admissionregistration.v1alpha1.MutatingAdmissionPolicySpecRspec"√
MutatingAdmissionPolicyBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataZ
spec (2F.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyBindingSpecRspec"√
"MutatingAdmissionPolicyBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataX
items (2B.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyBindingRitems"Í
"MutatingAdmissionPolicyBindingSpec

policyName (	R
policyNameH
paramRef (2,.api.admissionregistration.v1alpha1.ParamRefRparamRefZ
matchResources (22.api.admissionregistration.v1alpha1.MatchResourcesRmatchResources"µ
MutatingAdmissionPolicyListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataQ
items (2;.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyRitems"ñ
MutatingAdmissionPolicySpecK
	paramKind (2-.api.admissionregistration.v1alpha1.ParamKindR	paramKind^
matchConstraints (22.api.admissionregistration.v1alpha1.MatchResourcesRmatchConstraintsJ
	variables (2,.api.admissionregistration.v1alpha1.VariableR	variablesJ
	mutations (2,.api.admissionregistration.v1alpha1.MutationR	mutations$
failurePolicy (	RfailurePolicy\
matchConditions (22.api.admissionregistration.v1alpha1.MatchConditionRmatchConditions.
reinvocationPolicy (	RreinvocationPolicy"›
Mutation
	patchType (	R	patchTypef
applyConfiguration (26.api.admissionregistration.v1alpha1.ApplyConfigurationRapplyConfigurationK
	jsonPatch (2-.api.admissionregistration.v1alpha1.JSONPatchR	jsonPatch"°
NamedRuleWithOperations$
resourceNames (	RresourceNames`
ruleWithOperations (20.api.admissionregistration.v1.RuleWithOperationsRruleWithOperations"?
	ParamKind

apiVersion (	R
apiVersion
kind (	Rkind"¿
ParamRef
name (	Rname
	namespace (	R	namespaceH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
parameterNotFoundAction (	RparameterNotFoundAction"u
TypeCheckinge
expressionWarnings (25.api.admissionregistration.v1alpha1.ExpressionWarningRexpressionWarnings"ñ
ValidatingAdmissionPolicyE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataU
spec (2A.api.admissionregistration.v1alpha1.ValidatingAdmissionPolicySpecRspec[
status (2C.api.admissionregistration.v1alpha1.ValidatingAdmissionPolicyStatusRstatus"«
 ValidatingAdmissionPolicyBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata\
spec (2H.api.admissionregistration.v1alpha1.ValidatingAdmissionPolicyBindingSpecRspec"«
$ValidatingAdmissionPolicyBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataZ
items (2D.api.admissionregistration.v1alpha1.ValidatingAdmissionPolicyBindingRitems"ö
$ValidatingAdmissionPolicyBindingSpec

policyName (	R
policyNameH
paramRef (2,.api.admissionregistration.v1alpha1.ParamRefRparamRefZ
matchResources (22.api.admissionregistration.v1alpha1.MatchResourcesRmatchResources,
validationActions (	RvalidationActions"π
ValidatingAdmissionPolicyListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataS
items (2=.api.admissionregistration.v1alpha1.ValidatingAdmissionPolicyRitems"œ
ValidatingAdmissionPolicySpecK
	paramKind (2-.api.admissionregistration.v1alpha1.ParamKindR	paramKind^
matchConstraints (22.api.admissionregistration.v1alpha1.MatchResourcesRmatchConstraintsP
validations (2..api.admissionregistration.v1alpha1.ValidationRvalidations$
failurePolicy (	RfailurePolicy_
auditAnnotations (23.api.admissionregistration.v1alpha1.AuditAnnotationRauditAnnotations\
matchConditions (22.api.admissionregistration.v1alpha1.MatchConditionRmatchConditionsJ
	variables (2,.api.admissionregistration.v1alpha1.VariableR	variables"Ò
ValidatingAdmissionPolicyStatus.
observedGeneration (RobservedGenerationT
typeChecking (20.api.admissionregistration.v1alpha1.TypeCheckingRtypeCheckingH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"å

Validation

Expression (	R
Expression
message (	Rmessage
reason (	Rreason,
messageExpression (	RmessageExpression">
Variable
Name (	RName

Expression (	R
ExpressionB+Z)k8s.io/api/admissionregistration/v1alpha1
≥>
1api/admissionregistration/v1beta1/generated.proto!api.admissionregistration.v1beta1,api/admissionregistration/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"4
ApplyConfiguration

expression (	R
expression"M
AuditAnnotation
key (	Rkey(
valueExpression (	RvalueExpression"I
ExpressionWarning
fieldRef (	RfieldRef
warning (	Rwarning"+
	JSONPatch

expression (	R
expression"D
MatchCondition
name (	Rname

expression (	R
expression"∂
MatchResourcesZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelectorT
objectSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRobjectSelector`
resourceRules (2:.api.admissionregistration.v1beta1.NamedRuleWithOperationsRresourceRulesn
excludeResourceRules (2:.api.admissionregistration.v1beta1.NamedRuleWithOperationsRexcludeResourceRules 
matchPolicy (	RmatchPolicy"¥
MutatingAdmissionPolicyE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataR
spec (2>.api.admissionregistration.v1beta1.MutatingAdmissionPolicySpecRspec"¬
MutatingAdmissionPolicyBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataY
spec (2E.api.admissionregistration.v1beta1.MutatingAdmissionPolicyBindingSpecRspec"¬
"MutatingAdmissionPolicyBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataW
items (2A.api.admissionregistration.v1beta1.MutatingAdmissionPolicyBindingRitems"Ë
"MutatingAdmissionPolicyBindingSpec

policyName (	R
policyNameG
paramRef (2+.api.admissionregistration.v1beta1.ParamRefRparamRefY
matchResources (21.api.admissionregistration.v1beta1.MatchResourcesRmatchResources"¥
MutatingAdmissionPolicyListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataP
items (2:.api.admissionregistration.v1beta1.MutatingAdmissionPolicyRitems"ë
MutatingAdmissionPolicySpecJ
	paramKind (2,.api.admissionregistration.v1beta1.ParamKindR	paramKind]
matchConstraints (21.api.admissionregistration.v1beta1.MatchResourcesRmatchConstraintsI
	variables (2+.api.admissionregistration.v1beta1.VariableR	variablesI
	mutations (2+.api.admissionregistration.v1beta1.MutationR	mutations$
failurePolicy (	RfailurePolicy[
matchConditions (21.api.admissionregistration.v1beta1.MatchConditionRmatchConditions.
reinvocationPolicy (	RreinvocationPolicy"‘
MutatingWebhook
name (	RnameZ
clientConfig (26.api.admissionregistration.v1beta1.WebhookClientConfigRclientConfigF
rules (20.api.admissionregistration.v1.RuleWithOperationsRrules$
failurePolicy (	RfailurePolicy 
matchPolicy	 (	RmatchPolicyZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelectorT
objectSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRobjectSelector 
sideEffects (	RsideEffects&
timeoutSeconds (RtimeoutSeconds8
admissionReviewVersions (	RadmissionReviewVersions.
reinvocationPolicy
 (	RreinvocationPolicy[
matchConditions (21.api.admissionregistration.v1beta1.MatchConditionRmatchConditions"µ
MutatingWebhookConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataN
Webhooks (22.api.admissionregistration.v1beta1.MutatingWebhookRWebhooks"æ
 MutatingWebhookConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataU
items (2?.api.admissionregistration.v1beta1.MutatingWebhookConfigurationRitems"€
Mutation
	patchType (	R	patchTypee
applyConfiguration (25.api.admissionregistration.v1beta1.ApplyConfigurationRapplyConfigurationJ
	jsonPatch (2,.api.admissionregistration.v1beta1.JSONPatchR	jsonPatch"°
NamedRuleWithOperations$
resourceNames (	RresourceNames`
ruleWithOperations (20.api.admissionregistration.v1.RuleWithOperationsRruleWithOperations"?
	ParamKind

apiVersion (	R
apiVersion
kind (	Rkind"¿
ParamRef
name (	Rname
	namespace (	R	namespaceH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
parameterNotFoundAction (	RparameterNotFoundAction"l
ServiceReference
	namespace (	R	namespace
name (	Rname
path (	Rpath
port (Rport"t
TypeCheckingd
expressionWarnings (24.api.admissionregistration.v1beta1.ExpressionWarningRexpressionWarnings"î
ValidatingAdmissionPolicyE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataT
spec (2@.api.admissionregistration.v1beta1.ValidatingAdmissionPolicySpecRspecZ
status (2B.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyStatusRstatus"∆
 ValidatingAdmissionPolicyBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata[
spec (2G.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBindingSpecRspec"∆
$ValidatingAdmissionPolicyBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataY
items (2C.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBindingRitems"ò
$ValidatingAdmissionPolicyBindingSpec

policyName (	R
policyNameG
paramRef (2+.api.admissionregistration.v1beta1.ParamRefRparamRefY
matchResources (21.api.admissionregistration.v1beta1.MatchResourcesRmatchResources,
validationActions (	RvalidationActions"∏
ValidatingAdmissionPolicyListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataR
items (2<.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyRitems"…
ValidatingAdmissionPolicySpecJ
	paramKind (2,.api.admissionregistration.v1beta1.ParamKindR	paramKind]
matchConstraints (21.api.admissionregistration.v1beta1.MatchResourcesRmatchConstraintsO
validations (2-.api.admissionregistration.v1beta1.ValidationRvalidations$
failurePolicy (	RfailurePolicy^
auditAnnotations (22.api.admissionregistration.v1beta1.AuditAnnotationRauditAnnotations[
matchConditions (21.api.admissionregistration.v1beta1.MatchConditionRmatchConditionsI
	variables (2+.api.admissionregistration.v1beta1.VariableR	variables"
ValidatingAdmissionPolicyStatus.
observedGeneration (RobservedGenerationS
typeChecking (2/.api.admissionregistration.v1beta1.TypeCheckingRtypeCheckingH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"¶
ValidatingWebhook
name (	RnameZ
clientConfig (26.api.admissionregistration.v1beta1.WebhookClientConfigRclientConfigF
rules (20.api.admissionregistration.v1.RuleWithOperationsRrules$
failurePolicy (	RfailurePolicy 
matchPolicy	 (	RmatchPolicyZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelectorT
objectSelector
 (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRobjectSelector 
sideEffects (	RsideEffects&
timeoutSeconds (RtimeoutSeconds8
admissionReviewVersions (	RadmissionReviewVersions[
matchConditions (21.api.admissionregistration.v1beta1.MatchConditionRmatchConditions"π
ValidatingWebhookConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataP
Webhooks (24.api.admissionregistration.v1beta1.ValidatingWebhookRWebhooks"¬
"ValidatingWebhookConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataW
items (2A.api.admissionregistration.v1beta1.ValidatingWebhookConfigurationRitems"å

Validation

Expression (	R
Expression
message (	Rmessage
reason (	Rreason,
messageExpression (	RmessageExpression">
Variable
Name (	RName

Expression (	R
Expression"í
WebhookClientConfig
url (	RurlM
service (23.api.admissionregistration.v1beta1.ServiceReferenceRservice
caBundle (RcaBundleB*Z(k8s.io/api/admissionregistration/v1beta1
Ø

#api/apidiscovery/v2/generated.protoapi.apidiscovery.v2-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"†
APIGroupDiscoveryE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataD
versions (2(.api.apidiscovery.v2.APIVersionDiscoveryRversions"ö
APIGroupDiscoveryListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.api.apidiscovery.v2.APIGroupDiscoveryRitems"Ò
APIResourceDiscovery
resource (	RresourceS
responseKind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRresponseKind
scope (	Rscope*
singularResource (	RsingularResource
verbs (	Rverbs

shortNames (	R
shortNames

categories (	R
categoriesP
subresources (2,.api.apidiscovery.v2.APISubresourceDiscoveryRsubresources"˝
APISubresourceDiscovery 
subresource (	RsubresourceS
responseKind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRresponseKindU
acceptedTypes (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRacceptedTypes
verbs (	Rverbs"ñ
APIVersionDiscovery
version (	RversionG
	resources (2).api.apidiscovery.v2.APIResourceDiscoveryR	resources
	freshness (	R	freshnessBZk8s.io/api/apidiscovery/v2
“

(api/apidiscovery/v2beta1/generated.protoapi.apidiscovery.v2beta1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"•
APIGroupDiscoveryE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataI
versions (2-.api.apidiscovery.v2beta1.APIVersionDiscoveryRversions"ü
APIGroupDiscoveryListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataA
items (2+.api.apidiscovery.v2beta1.APIGroupDiscoveryRitems"ˆ
APIResourceDiscovery
resource (	RresourceS
responseKind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRresponseKind
scope (	Rscope*
singularResource (	RsingularResource
verbs (	Rverbs

shortNames (	R
shortNames

categories (	R
categoriesU
subresources (21.api.apidiscovery.v2beta1.APISubresourceDiscoveryRsubresources"˝
APISubresourceDiscovery 
subresource (	RsubresourceS
responseKind (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRresponseKindU
acceptedTypes (2/.apimachinery.pkg.apis.meta.v1.GroupVersionKindRacceptedTypes
verbs (	Rverbs"õ
APIVersionDiscovery
version (	RversionL
	resources (2..api.apidiscovery.v2beta1.APIResourceDiscoveryR	resources
	freshness (	R	freshnessB!Zk8s.io/api/apidiscovery/v2beta1
Ì

.api/apiserverinternal/v1alpha1/generated.protoapi.apiserverinternal.v1alpha1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"∏
ServerStorageVersion 
apiServerID (	RapiServerID(
encodingVersion (	RencodingVersion,
decodableVersions (	RdecodableVersions&
servedVersions (	RservedVersions"Ì
StorageVersionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
spec (22.api.apiserverinternal.v1alpha1.StorageVersionSpecRspecL
status (24.api.apiserverinternal.v1alpha1.StorageVersionStatusRstatus"¸
StorageVersionCondition
type (	Rtype
status (	Rstatus.
observedGeneration (RobservedGenerationS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ü
StorageVersionListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataD
items (2..api.apiserverinternal.v1alpha1.StorageVersionRitems"
StorageVersionSpec"Ö
StorageVersionStatus^
storageVersions (24.api.apiserverinternal.v1alpha1.ServerStorageVersionRstorageVersions4
commonEncodingVersion (	RcommonEncodingVersionW

conditions (27.api.apiserverinternal.v1alpha1.StorageVersionConditionR
conditionsB'Z%k8s.io/api/apiserverinternal/v1alpha1
˜8
api/apps/v1/generated.protoapi.apps.v1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"≥
ControllerRevisionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
data (2&.apimachinery.pkg.runtime.RawExtensionRdata
revision (Rrevision"î
ControllerRevisionListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.apps.v1.ControllerRevisionRitems"∏
	DaemonSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata.
spec (2.api.apps.v1.DaemonSetSpecRspec4
status (2.api.apps.v1.DaemonSetStatusRstatus"«
DaemonSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"Ç
DaemonSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata,
items (2.api.apps.v1.DaemonSetRitems"ø
DaemonSetSpecH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplateL
updateStrategy (2$.api.apps.v1.DaemonSetUpdateStrategyRupdateStrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit"¸
DaemonSetStatus6
currentNumberScheduled (RcurrentNumberScheduled.
numberMisscheduled (RnumberMisscheduled6
desiredNumberScheduled (RdesiredNumberScheduled 
numberReady (RnumberReady.
observedGeneration (RobservedGeneration6
updatedNumberScheduled (RupdatedNumberScheduled(
numberAvailable (RnumberAvailable,
numberUnavailable (RnumberUnavailable&
collisionCount	 (RcollisionCount?

conditions
 (2.api.apps.v1.DaemonSetConditionR
conditions"x
DaemonSetUpdateStrategy
type (	RtypeI
rollingUpdate (2#.api.apps.v1.RollingUpdateDaemonSetRrollingUpdate"ª

DeploymentE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.api.apps.v1.DeploymentSpecRspec5
status (2.api.apps.v1.DeploymentStatusRstatus"ï
DeploymentCondition
type (	Rtype
status (	RstatusK
lastUpdateTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastUpdateTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"Ñ
DeploymentListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata-
items (2.api.apps.v1.DeploymentRitems"ù
DeploymentSpec
replicas (RreplicasH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplate;
strategy (2.api.apps.v1.DeploymentStrategyRstrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit
paused (Rpaused8
progressDeadlineSeconds	 (RprogressDeadlineSeconds"™
DeploymentStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas(
updatedReplicas (RupdatedReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
unavailableReplicas (RunavailableReplicas0
terminatingReplicas	 (RterminatingReplicas@

conditions (2 .api.apps.v1.DeploymentConditionR
conditions&
collisionCount (RcollisionCount"t
DeploymentStrategy
type (	RtypeJ
rollingUpdate (2$.api.apps.v1.RollingUpdateDeploymentRrollingUpdate"ª

ReplicaSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.api.apps.v1.ReplicaSetSpecRspec5
status (2.api.apps.v1.ReplicaSetStatusRstatus"»
ReplicaSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"Ñ
ReplicaSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata-
items (2.api.apps.v1.ReplicaSetRitems"⁄
ReplicaSetSpec
replicas (Rreplicas(
minReadySeconds (RminReadySecondsH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplate"⁄
ReplicaSetStatus
replicas (Rreplicas2
fullyLabeledReplicas (RfullyLabeledReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
terminatingReplicas (RterminatingReplicas.
observedGeneration (RobservedGeneration@

conditions (2 .api.apps.v1.ReplicaSetConditionR
conditions"≤
RollingUpdateDaemonSetQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableE
maxSurge (2).apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"≥
RollingUpdateDeploymentQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableE
maxSurge (2).apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"ì
 RollingUpdateStatefulSetStrategy
	partition (R	partitionQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailable"æ
StatefulSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata0
spec (2.api.apps.v1.StatefulSetSpecRspec6
status (2.api.apps.v1.StatefulSetStatusRstatus"…
StatefulSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"Ü
StatefulSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata.
items (2.api.apps.v1.StatefulSetRitems"+
StatefulSetOrdinals
start (Rstart"s
/StatefulSetPersistentVolumeClaimRetentionPolicy 
whenDeleted (	RwhenDeleted

whenScaled (	R
whenScaled"‹
StatefulSetSpec
replicas (RreplicasH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplateV
volumeClaimTemplates (2".api.core.v1.PersistentVolumeClaimRvolumeClaimTemplates 
serviceName (	RserviceName0
podManagementPolicy (	RpodManagementPolicyN
updateStrategy (2&.api.apps.v1.StatefulSetUpdateStrategyRupdateStrategy2
revisionHistoryLimit (RrevisionHistoryLimit(
minReadySeconds	 (RminReadySecondsê
$persistentVolumeClaimRetentionPolicy
 (2<.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicyR$persistentVolumeClaimRetentionPolicy<
ordinals (2 .api.apps.v1.StatefulSetOrdinalsRordinals"ƒ
StatefulSetStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas$
readyReplicas (RreadyReplicas(
currentReplicas (RcurrentReplicas(
updatedReplicas (RupdatedReplicas(
currentRevision (	RcurrentRevision&
updateRevision (	RupdateRevision&
collisionCount	 (RcollisionCountA

conditions
 (2!.api.apps.v1.StatefulSetConditionR
conditions,
availableReplicas (RavailableReplicas"Ñ
StatefulSetUpdateStrategy
type (	RtypeS
rollingUpdate (2-.api.apps.v1.RollingUpdateStatefulSetStrategyRrollingUpdateBZk8s.io/api/apps/v1
€*
 api/apps/v1beta1/generated.protoapi.apps.v1beta1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"≥
ControllerRevisionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
data (2&.apimachinery.pkg.runtime.RawExtensionRdata
revision (Rrevision"ô
ControllerRevisionListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata:
items (2$.api.apps.v1beta1.ControllerRevisionRitems"≈

DeploymentE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
spec (2 .api.apps.v1beta1.DeploymentSpecRspec:
status (2".api.apps.v1beta1.DeploymentStatusRstatus"ï
DeploymentCondition
type (	Rtype
status (	RstatusK
lastUpdateTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastUpdateTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"â
DeploymentListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.apps.v1beta1.DeploymentRitems"ü
DeploymentRollback
name (	Rnamel
updatedAnnotations (2<.api.apps.v1beta1.DeploymentRollback.UpdatedAnnotationsEntryRupdatedAnnotations@

rollbackTo (2 .api.apps.v1beta1.RollbackConfigR
rollbackToE
UpdatedAnnotationsEntry
key (	Rkey
value (	Rvalue:8"‰
DeploymentSpec
replicas (RreplicasH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplate@
strategy (2$.api.apps.v1beta1.DeploymentStrategyRstrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit
paused (Rpaused@

rollbackTo (2 .api.apps.v1beta1.RollbackConfigR
rollbackTo8
progressDeadlineSeconds	 (RprogressDeadlineSeconds"Ø
DeploymentStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas(
updatedReplicas (RupdatedReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
unavailableReplicas (RunavailableReplicas0
terminatingReplicas	 (RterminatingReplicasE

conditions (2%.api.apps.v1beta1.DeploymentConditionR
conditions&
collisionCount (RcollisionCount"y
DeploymentStrategy
type (	RtypeO
rollingUpdate (2).api.apps.v1beta1.RollingUpdateDeploymentRrollingUpdate",
RollbackConfig
revision (Rrevision"≥
RollingUpdateDeploymentQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableE
maxSurge (2).apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"ì
 RollingUpdateStatefulSetStrategy
	partition (R	partitionQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailable"∂
ScaleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.api.apps.v1beta1.ScaleSpecRspec5
status (2.api.apps.v1beta1.ScaleStatusRstatus"'
	ScaleSpec
replicas (Rreplicas"◊
ScaleStatus
replicas (RreplicasG
selector (2+.api.apps.v1beta1.ScaleStatus.SelectorEntryRselector&
targetSelector (	RtargetSelector;
SelectorEntry
key (	Rkey
value (	Rvalue:8"»
StatefulSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
spec (2!.api.apps.v1beta1.StatefulSetSpecRspec;
status (2#.api.apps.v1beta1.StatefulSetStatusRstatus"…
StatefulSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ã
StatefulSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.api.apps.v1beta1.StatefulSetRitems"+
StatefulSetOrdinals
start (Rstart"s
/StatefulSetPersistentVolumeClaimRetentionPolicy 
whenDeleted (	RwhenDeleted

whenScaled (	R
whenScaled"Î
StatefulSetSpec
replicas (RreplicasH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplateV
volumeClaimTemplates (2".api.core.v1.PersistentVolumeClaimRvolumeClaimTemplates 
serviceName (	RserviceName0
podManagementPolicy (	RpodManagementPolicyS
updateStrategy (2+.api.apps.v1beta1.StatefulSetUpdateStrategyRupdateStrategy2
revisionHistoryLimit (RrevisionHistoryLimit(
minReadySeconds	 (RminReadySecondsï
$persistentVolumeClaimRetentionPolicy
 (2A.api.apps.v1beta1.StatefulSetPersistentVolumeClaimRetentionPolicyR$persistentVolumeClaimRetentionPolicyA
ordinals (2%.api.apps.v1beta1.StatefulSetOrdinalsRordinals"…
StatefulSetStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas$
readyReplicas (RreadyReplicas(
currentReplicas (RcurrentReplicas(
updatedReplicas (RupdatedReplicas(
currentRevision (	RcurrentRevision&
updateRevision (	RupdateRevision&
collisionCount	 (RcollisionCountF

conditions
 (2&.api.apps.v1beta1.StatefulSetConditionR
conditions,
availableReplicas (RavailableReplicas"â
StatefulSetUpdateStrategy
type (	RtypeX
rollingUpdate (22.api.apps.v1beta1.RollingUpdateStatefulSetStrategyRrollingUpdateBZk8s.io/api/apps/v1beta1
ø=
 api/apps/v1beta2/generated.protoapi.apps.v1beta2api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"≥
ControllerRevisionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
data (2&.apimachinery.pkg.runtime.RawExtensionRdata
revision (Rrevision"ô
ControllerRevisionListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata:
items (2$.api.apps.v1beta2.ControllerRevisionRitems"¬
	DaemonSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata3
spec (2.api.apps.v1beta2.DaemonSetSpecRspec9
status (2!.api.apps.v1beta2.DaemonSetStatusRstatus"«
DaemonSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"á
DaemonSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata1
items (2.api.apps.v1beta2.DaemonSetRitems"ƒ
DaemonSetSpecH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplateQ
updateStrategy (2).api.apps.v1beta2.DaemonSetUpdateStrategyRupdateStrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit"Å
DaemonSetStatus6
currentNumberScheduled (RcurrentNumberScheduled.
numberMisscheduled (RnumberMisscheduled6
desiredNumberScheduled (RdesiredNumberScheduled 
numberReady (RnumberReady.
observedGeneration (RobservedGeneration6
updatedNumberScheduled (RupdatedNumberScheduled(
numberAvailable (RnumberAvailable,
numberUnavailable (RnumberUnavailable&
collisionCount	 (RcollisionCountD

conditions
 (2$.api.apps.v1beta2.DaemonSetConditionR
conditions"}
DaemonSetUpdateStrategy
type (	RtypeN
rollingUpdate (2(.api.apps.v1beta2.RollingUpdateDaemonSetRrollingUpdate"≈

DeploymentE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
spec (2 .api.apps.v1beta2.DeploymentSpecRspec:
status (2".api.apps.v1beta2.DeploymentStatusRstatus"ï
DeploymentCondition
type (	Rtype
status (	RstatusK
lastUpdateTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastUpdateTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"â
DeploymentListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.apps.v1beta2.DeploymentRitems"¢
DeploymentSpec
replicas (RreplicasH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplate@
strategy (2$.api.apps.v1beta2.DeploymentStrategyRstrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit
paused (Rpaused8
progressDeadlineSeconds	 (RprogressDeadlineSeconds"Ø
DeploymentStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas(
updatedReplicas (RupdatedReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
unavailableReplicas (RunavailableReplicas0
terminatingReplicas	 (RterminatingReplicasE

conditions (2%.api.apps.v1beta2.DeploymentConditionR
conditions&
collisionCount (RcollisionCount"y
DeploymentStrategy
type (	RtypeO
rollingUpdate (2).api.apps.v1beta2.RollingUpdateDeploymentRrollingUpdate"≈

ReplicaSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
spec (2 .api.apps.v1beta2.ReplicaSetSpecRspec:
status (2".api.apps.v1beta2.ReplicaSetStatusRstatus"»
ReplicaSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"â
ReplicaSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.apps.v1beta2.ReplicaSetRitems"⁄
ReplicaSetSpec
replicas (Rreplicas(
minReadySeconds (RminReadySecondsH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplate"ﬂ
ReplicaSetStatus
replicas (Rreplicas2
fullyLabeledReplicas (RfullyLabeledReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
terminatingReplicas (RterminatingReplicas.
observedGeneration (RobservedGenerationE

conditions (2%.api.apps.v1beta2.ReplicaSetConditionR
conditions"≤
RollingUpdateDaemonSetQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableE
maxSurge (2).apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"≥
RollingUpdateDeploymentQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableE
maxSurge (2).apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"ì
 RollingUpdateStatefulSetStrategy
	partition (R	partitionQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailable"∂
ScaleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.api.apps.v1beta2.ScaleSpecRspec5
status (2.api.apps.v1beta2.ScaleStatusRstatus"'
	ScaleSpec
replicas (Rreplicas"◊
ScaleStatus
replicas (RreplicasG
selector (2+.api.apps.v1beta2.ScaleStatus.SelectorEntryRselector&
targetSelector (	RtargetSelector;
SelectorEntry
key (	Rkey
value (	Rvalue:8"»
StatefulSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
spec (2!.api.apps.v1beta2.StatefulSetSpecRspec;
status (2#.api.apps.v1beta2.StatefulSetStatusRstatus"…
StatefulSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ã
StatefulSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.api.apps.v1beta2.StatefulSetRitems"+
StatefulSetOrdinals
start (Rstart"s
/StatefulSetPersistentVolumeClaimRetentionPolicy 
whenDeleted (	RwhenDeleted

whenScaled (	R
whenScaled"Î
StatefulSetSpec
replicas (RreplicasH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplateV
volumeClaimTemplates (2".api.core.v1.PersistentVolumeClaimRvolumeClaimTemplates 
serviceName (	RserviceName0
podManagementPolicy (	RpodManagementPolicyS
updateStrategy (2+.api.apps.v1beta2.StatefulSetUpdateStrategyRupdateStrategy2
revisionHistoryLimit (RrevisionHistoryLimit(
minReadySeconds	 (RminReadySecondsï
$persistentVolumeClaimRetentionPolicy
 (2A.api.apps.v1beta2.StatefulSetPersistentVolumeClaimRetentionPolicyR$persistentVolumeClaimRetentionPolicyA
ordinals (2%.api.apps.v1beta2.StatefulSetOrdinalsRordinals"…
StatefulSetStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas$
readyReplicas (RreadyReplicas(
currentReplicas (RcurrentReplicas(
updatedReplicas (RupdatedReplicas(
currentRevision (	RcurrentRevision&
updateRevision (	RupdateRevision&
collisionCount	 (RcollisionCountF

conditions
 (2&.api.apps.v1beta2.StatefulSetConditionR
conditions,
availableReplicas (RavailableReplicas"â
StatefulSetUpdateStrategy
type (	RtypeX
rollingUpdate (22.api.apps.v1beta2.RollingUpdateStatefulSetStrategyRrollingUpdateBZk8s.io/api/apps/v1beta2
¿
%api/authentication/v1/generated.protoapi.authentication.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"p
BoundObjectReference
kind (	Rkind

apiVersion (	R
apiVersion
name (	Rname
uID (	RuID""

ExtraValue
items (	Ritems"¢
SelfSubjectReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
status (2..api.authentication.v1.SelfSubjectReviewStatusRstatus"V
SelfSubjectReviewStatus;
userInfo (2.api.authentication.v1.UserInfoRuserInfo"’
TokenRequestE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.authentication.v1.TokenRequestSpecRspecA
status (2).api.authentication.v1.TokenRequestStatusRstatus"≥
TokenRequestSpec
	audiences (	R	audiences,
expirationSeconds (RexpirationSecondsS
boundObjectRef (2+.api.authentication.v1.BoundObjectReferenceRboundObjectRef"Å
TokenRequestStatus
token (	RtokenU
expirationTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRexpirationTimestamp"“
TokenReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
spec (2&.api.authentication.v1.TokenReviewSpecRspec@
status (2(.api.authentication.v1.TokenReviewStatusRstatus"E
TokenReviewSpec
token (	Rtoken
	audiences (	R	audiences"¢
TokenReviewStatus$
authenticated (Rauthenticated3
user (2.api.authentication.v1.UserInfoRuser
	audiences (	R	audiences
error (	Rerror"Ô
UserInfo
username (	Rusername
uid (	Ruid
groups (	Rgroups@
extra (2*.api.authentication.v1.UserInfo.ExtraEntryRextra[

ExtraEntry
key (	Rkey7
value (2!.api.authentication.v1.ExtraValueRvalue:8BZk8s.io/api/authentication/v1
§
+api/authentication/v1alpha1/generated.protoapi.authentication.v1alpha1%api/authentication/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"®
SelfSubjectReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataL
status (24.api.authentication.v1alpha1.SelfSubjectReviewStatusRstatus"V
SelfSubjectReviewStatus;
userInfo (2.api.authentication.v1.UserInfoRuserInfoB$Z"k8s.io/api/authentication/v1alpha1
ê

*api/authentication/v1beta1/generated.protoapi.authentication.v1beta1%api/authentication/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto""

ExtraValue
items (	Ritems"ß
SelfSubjectReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
status (23.api.authentication.v1beta1.SelfSubjectReviewStatusRstatus"V
SelfSubjectReviewStatus;
userInfo (2.api.authentication.v1.UserInfoRuserInfo"‹
TokenReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata?
spec (2+.api.authentication.v1beta1.TokenReviewSpecRspecE
status (2-.api.authentication.v1beta1.TokenReviewStatusRstatus"E
TokenReviewSpec
token (	Rtoken
	audiences (	R	audiences"ß
TokenReviewStatus$
authenticated (Rauthenticated8
user (2$.api.authentication.v1beta1.UserInfoRuser
	audiences (	R	audiences
error (	Rerror"˘
UserInfo
username (	Rusername
uid (	Ruid
groups (	RgroupsE
extra (2/.api.authentication.v1beta1.UserInfo.ExtraEntryRextra`

ExtraEntry
key (	Rkey<
value (2&.api.authentication.v1beta1.ExtraValueRvalue:8B#Z!k8s.io/api/authentication/v1beta1
Å
$api/authorization/v1/generated.protoapi.authorization.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto""

ExtraValue
items (	Ritems"ò
FieldSelectorAttributes 
rawSelector (	RrawSelector[
requirements (27.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirementRrequirements"ò
LabelSelectorAttributes 
rawSelector (	RrawSelector[
requirements (27.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirementRrequirements"Ì
LocalSubjectAccessReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.api.authorization.v1.SubjectAccessReviewSpecRspecG
status (2/.api.authorization.v1.SubjectAccessReviewStatusRstatus"?
NonResourceAttributes
path (	Rpath
verb (	Rverb"Q
NonResourceRule
verbs (	Rverbs(
nonResourceURLs (	RnonResourceURLs"Ú
ResourceAttributes
	namespace (	R	namespace
verb (	Rverb
group (	Rgroup
version (	Rversion
resource (	Rresource 
subresource (	Rsubresource
name (	RnameS
fieldSelector (2-.api.authorization.v1.FieldSelectorAttributesRfieldSelectorS
labelSelector	 (2-.api.authorization.v1.LabelSelectorAttributesRlabelSelector"Ü
ResourceRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources$
resourceNames (	RresourceNames"
SelfSubjectAccessReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataE
spec (21.api.authorization.v1.SelfSubjectAccessReviewSpecRspecG
status (2/.api.authorization.v1.SubjectAccessReviewStatusRstatus"⁄
SelfSubjectAccessReviewSpecX
resourceAttributes (2(.api.authorization.v1.ResourceAttributesRresourceAttributesa
nonResourceAttributes (2+.api.authorization.v1.NonResourceAttributesRnonResourceAttributes"Ì
SelfSubjectRulesReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataD
spec (20.api.authorization.v1.SelfSubjectRulesReviewSpecRspecF
status (2..api.authorization.v1.SubjectRulesReviewStatusRstatus":
SelfSubjectRulesReviewSpec
	namespace (	R	namespace"Ë
SubjectAccessReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.api.authorization.v1.SubjectAccessReviewSpecRspecG
status (2/.api.authorization.v1.SubjectAccessReviewStatusRstatus"¿
SubjectAccessReviewSpecX
resourceAttributes (2(.api.authorization.v1.ResourceAttributesRresourceAttributesa
nonResourceAttributes (2+.api.authorization.v1.NonResourceAttributesRnonResourceAttributes
user (	Ruser
groups (	RgroupsN
extra (28.api.authorization.v1.SubjectAccessReviewSpec.ExtraEntryRextra
uid (	RuidZ

ExtraEntry
key (	Rkey6
value (2 .api.authorization.v1.ExtraValueRvalue:8"è
SubjectAccessReviewStatus
allowed (Rallowed
denied (Rdenied
reason (	Rreason(
evaluationError (	RevaluationError"Å
SubjectRulesReviewStatusH
resourceRules (2".api.authorization.v1.ResourceRuleRresourceRulesQ
nonResourceRules (2%.api.authorization.v1.NonResourceRuleRnonResourceRules

incomplete (R
incomplete(
evaluationError (	RevaluationErrorBZk8s.io/api/authorization/v1
Œ
)api/authorization/v1beta1/generated.protoapi.authorization.v1beta1$api/authorization/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto""

ExtraValue
items (	Ritems"˜
LocalSubjectAccessReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
spec (22.api.authorization.v1beta1.SubjectAccessReviewSpecRspecL
status (24.api.authorization.v1beta1.SubjectAccessReviewStatusRstatus"?
NonResourceAttributes
path (	Rpath
verb (	Rverb"Q
NonResourceRule
verbs (	Rverbs(
nonResourceURLs (	RnonResourceURLs"Ú
ResourceAttributes
	namespace (	R	namespace
verb (	Rverb
group (	Rgroup
version (	Rversion
resource (	Rresource 
subresource (	Rsubresource
name (	RnameS
fieldSelector (2-.api.authorization.v1.FieldSelectorAttributesRfieldSelectorS
labelSelector	 (2-.api.authorization.v1.LabelSelectorAttributesRlabelSelector"Ü
ResourceRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources$
resourceNames (	RresourceNames"˙
SelfSubjectAccessReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataJ
spec (26.api.authorization.v1beta1.SelfSubjectAccessReviewSpecRspecL
status (24.api.authorization.v1beta1.SubjectAccessReviewStatusRstatus"‰
SelfSubjectAccessReviewSpec]
resourceAttributes (2-.api.authorization.v1beta1.ResourceAttributesRresourceAttributesf
nonResourceAttributes (20.api.authorization.v1beta1.NonResourceAttributesRnonResourceAttributes"˜
SelfSubjectRulesReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataI
spec (25.api.authorization.v1beta1.SelfSubjectRulesReviewSpecRspecK
status (23.api.authorization.v1beta1.SubjectRulesReviewStatusRstatus":
SelfSubjectRulesReviewSpec
	namespace (	R	namespace"Ú
SubjectAccessReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
spec (22.api.authorization.v1beta1.SubjectAccessReviewSpecRspecL
status (24.api.authorization.v1beta1.SubjectAccessReviewStatusRstatus"“
SubjectAccessReviewSpec]
resourceAttributes (2-.api.authorization.v1beta1.ResourceAttributesRresourceAttributesf
nonResourceAttributes (20.api.authorization.v1beta1.NonResourceAttributesRnonResourceAttributes
user (	Ruser
group (	RgroupS
extra (2=.api.authorization.v1beta1.SubjectAccessReviewSpec.ExtraEntryRextra
uid (	Ruid_

ExtraEntry
key (	Rkey;
value (2%.api.authorization.v1beta1.ExtraValueRvalue:8"è
SubjectAccessReviewStatus
allowed (Rallowed
denied (Rdenied
reason (	Rreason(
evaluationError (	RevaluationError"ã
SubjectRulesReviewStatusM
resourceRules (2'.api.authorization.v1beta1.ResourceRuleRresourceRulesV
nonResourceRules (2*.api.authorization.v1beta1.NonResourceRuleRnonResourceRules

incomplete (R
incomplete(
evaluationError (	RevaluationErrorB"Z k8s.io/api/authorization/v1beta1
»)
"api/autoscaling/v1/generated.protoapi.autoscaling.v1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ê
ContainerResourceMetricSource
name (	Rname:
targetAverageUtilization (RtargetAverageUtilizationW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValue
	container (	R	container"Í
ContainerResourceMetricStatus
name (	Rname<
currentAverageUtilization (RcurrentAverageUtilizationY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue
	container (	R	container"e
CrossVersionObjectReference
kind (	Rkind
name (	Rname

apiVersion (	R
apiVersion"∞
ExternalMetricSource

metricName (	R
metricNameT
metricSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRmetricSelectorI
targetValue (2'.apimachinery.pkg.api.resource.QuantityRtargetValueW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValue"¥
ExternalMetricStatus

metricName (	R
metricNameT
metricSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRmetricSelectorK
currentValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentValueY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue"
HorizontalPodAutoscalerE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataC
spec (2/.api.autoscaling.v1.HorizontalPodAutoscalerSpecRspecI
status (21.api.autoscaling.v1.HorizontalPodAutoscalerStatusRstatus"’
 HorizontalPodAutoscalerCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"•
HorizontalPodAutoscalerListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataA
items (2+.api.autoscaling.v1.HorizontalPodAutoscalerRitems"Ç
HorizontalPodAutoscalerSpecW
scaleTargetRef (2/.api.autoscaling.v1.CrossVersionObjectReferenceRscaleTargetRef 
minReplicas (RminReplicas 
maxReplicas (RmaxReplicasF
targetCPUUtilizationPercentage (RtargetCPUUtilizationPercentage"∏
HorizontalPodAutoscalerStatus.
observedGeneration (RobservedGenerationI
lastScaleTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastScaleTime(
currentReplicas (RcurrentReplicas(
desiredReplicas (RdesiredReplicasH
currentCPUUtilizationPercentage (RcurrentCPUUtilizationPercentage"á

MetricSpec
type (	Rtype>
object (2&.api.autoscaling.v1.ObjectMetricSourceRobject8
pods (2$.api.autoscaling.v1.PodsMetricSourceRpodsD
resource (2(.api.autoscaling.v1.ResourceMetricSourceRresource_
containerResource (21.api.autoscaling.v1.ContainerResourceMetricSourceRcontainerResourceD
external (2(.api.autoscaling.v1.ExternalMetricSourceRexternal"â
MetricStatus
type (	Rtype>
object (2&.api.autoscaling.v1.ObjectMetricStatusRobject8
pods (2$.api.autoscaling.v1.PodsMetricStatusRpodsD
resource (2(.api.autoscaling.v1.ResourceMetricStatusRresource_
containerResource (21.api.autoscaling.v1.ContainerResourceMetricStatusRcontainerResourceD
external (2(.api.autoscaling.v1.ExternalMetricStatusRexternal"ﬂ
ObjectMetricSourceG
target (2/.api.autoscaling.v1.CrossVersionObjectReferenceRtarget

metricName (	R
metricNameI
targetValue (2'.apimachinery.pkg.api.resource.QuantityRtargetValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue"·
ObjectMetricStatusG
target (2/.api.autoscaling.v1.CrossVersionObjectReferenceRtarget

metricName (	R
metricNameK
currentValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue"’
PodsMetricSource

metricName (	R
metricNameW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"◊
PodsMetricStatus

metricName (	R
metricNameY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"ø
ResourceMetricSource
name (	Rname:
targetAverageUtilization (RtargetAverageUtilizationW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValue"√
ResourceMetricStatus
name (	Rname<
currentAverageUtilization (RcurrentAverageUtilizationY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue"∫
ScaleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata1
spec (2.api.autoscaling.v1.ScaleSpecRspec7
status (2.api.autoscaling.v1.ScaleStatusRstatus"'
	ScaleSpec
replicas (Rreplicas"E
ScaleStatus
replicas (Rreplicas
selector (	RselectorBZk8s.io/api/autoscaling/v1
ø(
"api/autoscaling/v2/generated.protoapi.autoscaling.v2api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ã
ContainerResourceMetricSource
name (	Rname8
target (2 .api.autoscaling.v2.MetricTargetRtarget
	container (	R	container"í
ContainerResourceMetricStatus
name (	Rname?
current (2%.api.autoscaling.v2.MetricValueStatusRcurrent
	container (	R	container"e
CrossVersionObjectReference
kind (	Rkind
name (	Rname

apiVersion (	R
apiVersion"é
ExternalMetricSource<
metric (2$.api.autoscaling.v2.MetricIdentifierRmetric8
target (2 .api.autoscaling.v2.MetricTargetRtarget"ï
ExternalMetricStatus<
metric (2$.api.autoscaling.v2.MetricIdentifierRmetric?
current (2%.api.autoscaling.v2.MetricValueStatusRcurrent"b
HPAScalingPolicy
type (	Rtype
value (Rvalue$
periodSeconds (RperiodSeconds"˛
HPAScalingRules>
stabilizationWindowSeconds (RstabilizationWindowSeconds"
selectPolicy (	RselectPolicy@
policies (2$.api.autoscaling.v2.HPAScalingPolicyRpoliciesE
	tolerance (2'.apimachinery.pkg.api.resource.QuantityR	tolerance"
HorizontalPodAutoscalerE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataC
spec (2/.api.autoscaling.v2.HorizontalPodAutoscalerSpecRspecI
status (21.api.autoscaling.v2.HorizontalPodAutoscalerStatusRstatus"£
HorizontalPodAutoscalerBehavior=
scaleUp (2#.api.autoscaling.v2.HPAScalingRulesRscaleUpA
	scaleDown (2#.api.autoscaling.v2.HPAScalingRulesR	scaleDown"’
 HorizontalPodAutoscalerCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"•
HorizontalPodAutoscalerListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataA
items (2+.api.autoscaling.v2.HorizontalPodAutoscalerRitems"≈
HorizontalPodAutoscalerSpecW
scaleTargetRef (2/.api.autoscaling.v2.CrossVersionObjectReferenceRscaleTargetRef 
minReplicas (RminReplicas 
maxReplicas (RmaxReplicas8
metrics (2.api.autoscaling.v2.MetricSpecRmetricsO
behavior (23.api.autoscaling.v2.HorizontalPodAutoscalerBehaviorRbehavior"é
HorizontalPodAutoscalerStatus.
observedGeneration (RobservedGenerationI
lastScaleTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastScaleTime(
currentReplicas (RcurrentReplicas(
desiredReplicas (RdesiredReplicasH
currentMetrics (2 .api.autoscaling.v2.MetricStatusRcurrentMetricsT

conditions (24.api.autoscaling.v2.HorizontalPodAutoscalerConditionR
conditions"p
MetricIdentifier
name (	RnameH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"á

MetricSpec
type (	Rtype>
object (2&.api.autoscaling.v2.ObjectMetricSourceRobject8
pods (2$.api.autoscaling.v2.PodsMetricSourceRpodsD
resource (2(.api.autoscaling.v2.ResourceMetricSourceRresource_
containerResource (21.api.autoscaling.v2.ContainerResourceMetricSourceRcontainerResourceD
external (2(.api.autoscaling.v2.ExternalMetricSourceRexternal"â
MetricStatus
type (	Rtype>
object (2&.api.autoscaling.v2.ObjectMetricStatusRobject8
pods (2$.api.autoscaling.v2.PodsMetricStatusRpodsD
resource (2(.api.autoscaling.v2.ResourceMetricStatusRresource_
containerResource (21.api.autoscaling.v2.ContainerResourceMetricStatusRcontainerResourceD
external (2(.api.autoscaling.v2.ExternalMetricStatusRexternal"ﬁ
MetricTarget
type (	Rtype=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue.
averageUtilization (RaverageUtilization"œ
MetricValueStatus=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue.
averageUtilization (RaverageUtilization"Á
ObjectMetricSourceY
describedObject (2/.api.autoscaling.v2.CrossVersionObjectReferenceRdescribedObject8
target (2 .api.autoscaling.v2.MetricTargetRtarget<
metric (2$.api.autoscaling.v2.MetricIdentifierRmetric"Ó
ObjectMetricStatus<
metric (2$.api.autoscaling.v2.MetricIdentifierRmetric?
current (2%.api.autoscaling.v2.MetricValueStatusRcurrentY
describedObject (2/.api.autoscaling.v2.CrossVersionObjectReferenceRdescribedObject"ä
PodsMetricSource<
metric (2$.api.autoscaling.v2.MetricIdentifierRmetric8
target (2 .api.autoscaling.v2.MetricTargetRtarget"ë
PodsMetricStatus<
metric (2$.api.autoscaling.v2.MetricIdentifierRmetric?
current (2%.api.autoscaling.v2.MetricValueStatusRcurrent"d
ResourceMetricSource
name (	Rname8
target (2 .api.autoscaling.v2.MetricTargetRtarget"k
ResourceMetricStatus
name (	Rname?
current (2%.api.autoscaling.v2.MetricValueStatusRcurrentBZk8s.io/api/autoscaling/v2
—(
'api/autoscaling/v2beta1/generated.protoapi.autoscaling.v2beta1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ê
ContainerResourceMetricSource
name (	Rname:
targetAverageUtilization (RtargetAverageUtilizationW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValue
	container (	R	container"Í
ContainerResourceMetricStatus
name (	Rname<
currentAverageUtilization (RcurrentAverageUtilizationY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue
	container (	R	container"e
CrossVersionObjectReference
kind (	Rkind
name (	Rname

apiVersion (	R
apiVersion"∞
ExternalMetricSource

metricName (	R
metricNameT
metricSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRmetricSelectorI
targetValue (2'.apimachinery.pkg.api.resource.QuantityRtargetValueW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValue"¥
ExternalMetricStatus

metricName (	R
metricNameT
metricSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRmetricSelectorK
currentValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentValueY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValue"˙
HorizontalPodAutoscalerE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataH
spec (24.api.autoscaling.v2beta1.HorizontalPodAutoscalerSpecRspecN
status (26.api.autoscaling.v2beta1.HorizontalPodAutoscalerStatusRstatus"’
 HorizontalPodAutoscalerCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"™
HorizontalPodAutoscalerListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataF
items (20.api.autoscaling.v2beta1.HorizontalPodAutoscalerRitems"˛
HorizontalPodAutoscalerSpec\
scaleTargetRef (24.api.autoscaling.v2beta1.CrossVersionObjectReferenceRscaleTargetRef 
minReplicas (RminReplicas 
maxReplicas (RmaxReplicas=
metrics (2#.api.autoscaling.v2beta1.MetricSpecRmetrics"ò
HorizontalPodAutoscalerStatus.
observedGeneration (RobservedGenerationI
lastScaleTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastScaleTime(
currentReplicas (RcurrentReplicas(
desiredReplicas (RdesiredReplicasM
currentMetrics (2%.api.autoscaling.v2beta1.MetricStatusRcurrentMetricsY

conditions (29.api.autoscaling.v2beta1.HorizontalPodAutoscalerConditionR
conditions"†

MetricSpec
type (	RtypeC
object (2+.api.autoscaling.v2beta1.ObjectMetricSourceRobject=
pods (2).api.autoscaling.v2beta1.PodsMetricSourceRpodsI
resource (2-.api.autoscaling.v2beta1.ResourceMetricSourceRresourced
containerResource (26.api.autoscaling.v2beta1.ContainerResourceMetricSourceRcontainerResourceI
external (2-.api.autoscaling.v2beta1.ExternalMetricSourceRexternal"¢
MetricStatus
type (	RtypeC
object (2+.api.autoscaling.v2beta1.ObjectMetricStatusRobject=
pods (2).api.autoscaling.v2beta1.PodsMetricStatusRpodsI
resource (2-.api.autoscaling.v2beta1.ResourceMetricStatusRresourced
containerResource (26.api.autoscaling.v2beta1.ContainerResourceMetricStatusRcontainerResourceI
external (2-.api.autoscaling.v2beta1.ExternalMetricStatusRexternal"‰
ObjectMetricSourceL
target (24.api.autoscaling.v2beta1.CrossVersionObjectReferenceRtarget

metricName (	R
metricNameI
targetValue (2'.apimachinery.pkg.api.resource.QuantityRtargetValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue"Ê
ObjectMetricStatusL
target (24.api.autoscaling.v2beta1.CrossVersionObjectReferenceRtarget

metricName (	R
metricNameK
currentValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue"’
PodsMetricSource

metricName (	R
metricNameW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"◊
PodsMetricStatus

metricName (	R
metricNameY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"ø
ResourceMetricSource
name (	Rname:
targetAverageUtilization (RtargetAverageUtilizationW
targetAverageValue (2'.apimachinery.pkg.api.resource.QuantityRtargetAverageValue"√
ResourceMetricStatus
name (	Rname<
currentAverageUtilization (RcurrentAverageUtilizationY
currentAverageValue (2'.apimachinery.pkg.api.resource.QuantityRcurrentAverageValueB Zk8s.io/api/autoscaling/v2beta1
 )
'api/autoscaling/v2beta2/generated.protoapi.autoscaling.v2beta2api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ê
ContainerResourceMetricSource
name (	Rname=
target (2%.api.autoscaling.v2beta2.MetricTargetRtarget
	container (	R	container"ó
ContainerResourceMetricStatus
name (	RnameD
current (2*.api.autoscaling.v2beta2.MetricValueStatusRcurrent
	container (	R	container"e
CrossVersionObjectReference
kind (	Rkind
name (	Rname

apiVersion (	R
apiVersion"ò
ExternalMetricSourceA
metric (2).api.autoscaling.v2beta2.MetricIdentifierRmetric=
target (2%.api.autoscaling.v2beta2.MetricTargetRtarget"ü
ExternalMetricStatusA
metric (2).api.autoscaling.v2beta2.MetricIdentifierRmetricD
current (2*.api.autoscaling.v2beta2.MetricValueStatusRcurrent"b
HPAScalingPolicy
type (	Rtype
value (Rvalue$
periodSeconds (RperiodSeconds"º
HPAScalingRules>
stabilizationWindowSeconds (RstabilizationWindowSeconds"
selectPolicy (	RselectPolicyE
policies (2).api.autoscaling.v2beta2.HPAScalingPolicyRpolicies"˙
HorizontalPodAutoscalerE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataH
spec (24.api.autoscaling.v2beta2.HorizontalPodAutoscalerSpecRspecN
status (26.api.autoscaling.v2beta2.HorizontalPodAutoscalerStatusRstatus"≠
HorizontalPodAutoscalerBehaviorB
scaleUp (2(.api.autoscaling.v2beta2.HPAScalingRulesRscaleUpF
	scaleDown (2(.api.autoscaling.v2beta2.HPAScalingRulesR	scaleDown"’
 HorizontalPodAutoscalerCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"™
HorizontalPodAutoscalerListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataF
items (20.api.autoscaling.v2beta2.HorizontalPodAutoscalerRitems"‘
HorizontalPodAutoscalerSpec\
scaleTargetRef (24.api.autoscaling.v2beta2.CrossVersionObjectReferenceRscaleTargetRef 
minReplicas (RminReplicas 
maxReplicas (RmaxReplicas=
metrics (2#.api.autoscaling.v2beta2.MetricSpecRmetricsT
behavior (28.api.autoscaling.v2beta2.HorizontalPodAutoscalerBehaviorRbehavior"ò
HorizontalPodAutoscalerStatus.
observedGeneration (RobservedGenerationI
lastScaleTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastScaleTime(
currentReplicas (RcurrentReplicas(
desiredReplicas (RdesiredReplicasM
currentMetrics (2%.api.autoscaling.v2beta2.MetricStatusRcurrentMetricsY

conditions (29.api.autoscaling.v2beta2.HorizontalPodAutoscalerConditionR
conditions"p
MetricIdentifier
name (	RnameH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"†

MetricSpec
type (	RtypeC
object (2+.api.autoscaling.v2beta2.ObjectMetricSourceRobject=
pods (2).api.autoscaling.v2beta2.PodsMetricSourceRpodsI
resource (2-.api.autoscaling.v2beta2.ResourceMetricSourceRresourced
containerResource (26.api.autoscaling.v2beta2.ContainerResourceMetricSourceRcontainerResourceI
external (2-.api.autoscaling.v2beta2.ExternalMetricSourceRexternal"¢
MetricStatus
type (	RtypeC
object (2+.api.autoscaling.v2beta2.ObjectMetricStatusRobject=
pods (2).api.autoscaling.v2beta2.PodsMetricStatusRpodsI
resource (2-.api.autoscaling.v2beta2.ResourceMetricStatusRresourced
containerResource (26.api.autoscaling.v2beta2.ContainerResourceMetricStatusRcontainerResourceI
external (2-.api.autoscaling.v2beta2.ExternalMetricStatusRexternal"ﬁ
MetricTarget
type (	Rtype=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue.
averageUtilization (RaverageUtilization"œ
MetricValueStatus=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueK
averageValue (2'.apimachinery.pkg.api.resource.QuantityRaverageValue.
averageUtilization (RaverageUtilization"ˆ
ObjectMetricSource^
describedObject (24.api.autoscaling.v2beta2.CrossVersionObjectReferenceRdescribedObject=
target (2%.api.autoscaling.v2beta2.MetricTargetRtargetA
metric (2).api.autoscaling.v2beta2.MetricIdentifierRmetric"˝
ObjectMetricStatusA
metric (2).api.autoscaling.v2beta2.MetricIdentifierRmetricD
current (2*.api.autoscaling.v2beta2.MetricValueStatusRcurrent^
describedObject (24.api.autoscaling.v2beta2.CrossVersionObjectReferenceRdescribedObject"î
PodsMetricSourceA
metric (2).api.autoscaling.v2beta2.MetricIdentifierRmetric=
target (2%.api.autoscaling.v2beta2.MetricTargetRtarget"õ
PodsMetricStatusA
metric (2).api.autoscaling.v2beta2.MetricIdentifierRmetricD
current (2*.api.autoscaling.v2beta2.MetricValueStatusRcurrent"i
ResourceMetricSource
name (	Rname=
target (2%.api.autoscaling.v2beta2.MetricTargetRtarget"p
ResourceMetricStatus
name (	RnameD
current (2*.api.autoscaling.v2beta2.MetricValueStatusRcurrentB Zk8s.io/api/autoscaling/v2beta2
Ü
api/batch/v1/generated.protoapi.batch.v1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"¥
CronJobE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata-
spec (2.api.batch.v1.CronJobSpecRspec3
status (2.api.batch.v1.CronJobStatusRstatus"
CronJobListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata+
items (2.api.batch.v1.CronJobRitems"Ä
CronJobSpec
schedule (	Rschedule
timeZone (	RtimeZone8
startingDeadlineSeconds (RstartingDeadlineSeconds,
concurrencyPolicy (	RconcurrencyPolicy
suspend (Rsuspend?
jobTemplate (2.api.batch.v1.JobTemplateSpecRjobTemplate>
successfulJobsHistoryLimit (RsuccessfulJobsHistoryLimit6
failedJobsHistoryLimit (RfailedJobsHistoryLimit"Î
CronJobStatus4
active (2.api.core.v1.ObjectReferenceRactiveO
lastScheduleTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastScheduleTimeS
lastSuccessfulTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastSuccessfulTime"®
JobE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata)
spec (2.api.batch.v1.JobSpecRspec/
status (2.api.batch.v1.JobStatusRstatus"å
JobCondition
type (	Rtype
status (	RstatusI
lastProbeTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastProbeTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"w
JobListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata'
items (2.api.batch.v1.JobRitems"ê
JobSpec 
parallelism (Rparallelism 
completions (Rcompletions4
activeDeadlineSeconds (RactiveDeadlineSecondsJ
podFailurePolicy (2.api.batch.v1.PodFailurePolicyRpodFailurePolicyA
successPolicy (2.api.batch.v1.SuccessPolicyRsuccessPolicy"
backoffLimit (RbackoffLimit2
backoffLimitPerIndex (RbackoffLimitPerIndex*
maxFailedIndexes (RmaxFailedIndexesH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector&
manualSelector (RmanualSelector8
template (2.api.core.v1.PodTemplateSpecRtemplate8
ttlSecondsAfterFinished (RttlSecondsAfterFinished&
completionMode	 (	RcompletionMode
suspend
 (Rsuspend2
podReplacementPolicy (	RpodReplacementPolicy
	managedBy (	R	managedBy"ê
	JobStatus:

conditions (2.api.batch.v1.JobConditionR
conditionsA
	startTime (2#.apimachinery.pkg.apis.meta.v1.TimeR	startTimeK
completionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRcompletionTime
active (Ractive
	succeeded (R	succeeded
failed (Rfailed 
terminating (Rterminating*
completedIndexes (	RcompletedIndexes$
failedIndexes
 (	RfailedIndexes_
uncountedTerminatedPods (2%.api.batch.v1.UncountedTerminatedPodsRuncountedTerminatedPods
ready	 (Rready"É
JobTemplateSpecE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata)
spec (2.api.batch.v1.JobSpecRspec"L
PodFailurePolicy8
rules (2".api.batch.v1.PodFailurePolicyRuleRrules"Ç
&PodFailurePolicyOnExitCodesRequirement$
containerName (	RcontainerName
operator (	Roperator
values (Rvalues"T
&PodFailurePolicyOnPodConditionsPattern
type (	Rtype
status (	Rstatus"Ê
PodFailurePolicyRule
action (	RactionV
onExitCodes (24.api.batch.v1.PodFailurePolicyOnExitCodesRequirementRonExitCodes^
onPodConditions (24.api.batch.v1.PodFailurePolicyOnPodConditionsPatternRonPodConditions"F
SuccessPolicy5
rules (2.api.batch.v1.SuccessPolicyRuleRrules"g
SuccessPolicyRule*
succeededIndexes (	RsucceededIndexes&
succeededCount (RsucceededCount"O
UncountedTerminatedPods
	succeeded (	R	succeeded
failed (	RfailedBZk8s.io/api/batch/v1
€

!api/batch/v1beta1/generated.protoapi.batch.v1beta1api/batch/v1/generated.protoapi/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"æ
CronJobE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata2
spec (2.api.batch.v1beta1.CronJobSpecRspec8
status (2 .api.batch.v1beta1.CronJobStatusRstatus"Ñ
CronJobListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata0
items (2.api.batch.v1beta1.CronJobRitems"Ö
CronJobSpec
schedule (	Rschedule
timeZone (	RtimeZone8
startingDeadlineSeconds (RstartingDeadlineSeconds,
concurrencyPolicy (	RconcurrencyPolicy
suspend (RsuspendD
jobTemplate (2".api.batch.v1beta1.JobTemplateSpecRjobTemplate>
successfulJobsHistoryLimit (RsuccessfulJobsHistoryLimit6
failedJobsHistoryLimit (RfailedJobsHistoryLimit"Î
CronJobStatus4
active (2.api.core.v1.ObjectReferenceRactiveO
lastScheduleTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastScheduleTimeS
lastSuccessfulTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastSuccessfulTime"É
JobTemplateSpecE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata)
spec (2.api.batch.v1.JobSpecRspecBZk8s.io/api/batch/v1beta1
©
#api/certificates/v1/generated.protoapi.certificates.v1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"¯
CertificateSigningRequestE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
spec (22.api.certificates.v1.CertificateSigningRequestSpecRspecL
status (24.api.certificates.v1.CertificateSigningRequestStatusRstatus"§
"CertificateSigningRequestCondition
type (	Rtype
status (	Rstatus
reason (	Rreason
message (	RmessageK
lastUpdateTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastUpdateTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime"™
CertificateSigningRequestListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataD
items (2..api.certificates.v1.CertificateSigningRequestRitems"ï
CertificateSigningRequestSpec
request (Rrequest

signerName (	R
signerName,
expirationSeconds (RexpirationSeconds
usages (	Rusages
username (	Rusername
uid (	Ruid
groups (	RgroupsS
extra (2=.api.certificates.v1.CertificateSigningRequestSpec.ExtraEntryRextraY

ExtraEntry
key (	Rkey5
value (2.api.certificates.v1.ExtraValueRvalue:8"ú
CertificateSigningRequestStatusW

conditions (27.api.certificates.v1.CertificateSigningRequestConditionR
conditions 
certificate (Rcertificate""

ExtraValue
items (	RitemsBZk8s.io/api/certificates/v1
ö
)api/certificates/v1alpha1/generated.protoapi.certificates.v1alpha1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"¢
ClusterTrustBundleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataE
spec (21.api.certificates.v1alpha1.ClusterTrustBundleSpecRspec"¢
ClusterTrustBundleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataC
items (2-.api.certificates.v1alpha1.ClusterTrustBundleRitems"Z
ClusterTrustBundleSpec

signerName (	R
signerName 
trustBundle (	RtrustBundleB"Z k8s.io/api/certificates/v1alpha1
Ò
(api/certificates/v1beta1/generated.protoapi.certificates.v1beta1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ç
CertificateSigningRequestE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
spec (27.api.certificates.v1beta1.CertificateSigningRequestSpecRspecQ
status (29.api.certificates.v1beta1.CertificateSigningRequestStatusRstatus"§
"CertificateSigningRequestCondition
type (	Rtype
status (	Rstatus
reason (	Rreason
message (	RmessageK
lastUpdateTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastUpdateTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime"Ø
CertificateSigningRequestListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataI
items (23.api.certificates.v1beta1.CertificateSigningRequestRitems"ü
CertificateSigningRequestSpec
request (Rrequest

signerName (	R
signerName,
expirationSeconds (RexpirationSeconds
usages (	Rusages
username (	Rusername
uid (	Ruid
groups (	RgroupsX
extra (2B.api.certificates.v1beta1.CertificateSigningRequestSpec.ExtraEntryRextra^

ExtraEntry
key (	Rkey:
value (2$.api.certificates.v1beta1.ExtraValueRvalue:8"°
CertificateSigningRequestStatus\

conditions (2<.api.certificates.v1beta1.CertificateSigningRequestConditionR
conditions 
certificate (Rcertificate"°
ClusterTrustBundleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataD
spec (20.api.certificates.v1beta1.ClusterTrustBundleSpecRspec"°
ClusterTrustBundleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataB
items (2,.api.certificates.v1beta1.ClusterTrustBundleRitems"Z
ClusterTrustBundleSpec

signerName (	R
signerName 
trustBundle (	RtrustBundle""

ExtraValue
items (	Ritems"ˆ
PodCertificateRequestE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataG
spec (23.api.certificates.v1beta1.PodCertificateRequestSpecRspecM
status (25.api.certificates.v1beta1.PodCertificateRequestStatusRstatus"ß
PodCertificateRequestListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataE
items (2/.api.certificates.v1beta1.PodCertificateRequestRitems"Í
PodCertificateRequestSpec

signerName (	R
signerName
podName (	RpodName
podUID (	RpodUID.
serviceAccountName (	RserviceAccountName,
serviceAccountUID (	RserviceAccountUID
nodeName (	RnodeName
nodeUID (	RnodeUID2
maxExpirationSeconds (RmaxExpirationSeconds$
pkixPublicKey	 (RpkixPublicKey,
proofOfPossession
 (RproofOfPossessionê
unverifiedUserAnnotations (2R.api.certificates.v1beta1.PodCertificateRequestSpec.UnverifiedUserAnnotationsEntryRunverifiedUserAnnotationsL
UnverifiedUserAnnotationsEntry
key (	Rkey
value (	Rvalue:8"‰
PodCertificateRequestStatusH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions*
certificateChain (	RcertificateChainA
	notBefore (2#.apimachinery.pkg.apis.meta.v1.TimeR	notBeforeK
beginRefreshAt (2#.apimachinery.pkg.apis.meta.v1.TimeRbeginRefreshAt?
notAfter (2#.apimachinery.pkg.apis.meta.v1.TimeRnotAfterB!Zk8s.io/api/certificates/v1beta1
‹
#api/coordination/v1/generated.protoapi.coordination.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ç
LeaseE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata2
spec (2.api.coordination.v1.LeaseSpecRspec"Ç
	LeaseListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata0
items (2.api.coordination.v1.LeaseRitems"Ì
	LeaseSpec&
holderIdentity (	RholderIdentity2
leaseDurationSeconds (RleaseDurationSecondsJ
acquireTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeRacquireTimeF
	renewTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeR	renewTime*
leaseTransitions (RleaseTransitions
strategy (	Rstrategy(
preferredHolder (	RpreferredHolderBZk8s.io/api/coordination/v1
Ñ
)api/coordination/v1alpha2/generated.protoapi.coordination.v1alpha2#api/coordination/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ö
LeaseCandidateE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
spec (2-.api.coordination.v1alpha2.LeaseCandidateSpecRspec"ö
LeaseCandidateListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata?
items (2).api.coordination.v1alpha2.LeaseCandidateRitems"Æ
LeaseCandidateSpec
	leaseName (	R	leaseNameD
pingTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeRpingTimeF
	renewTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeR	renewTime$
binaryVersion (	RbinaryVersion*
emulationVersion (	RemulationVersion
strategy (	RstrategyB"Z k8s.io/api/coordination/v1alpha2
É
(api/coordination/v1beta1/generated.protoapi.coordination.v1beta1#api/coordination/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"á
LeaseE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
spec (2#.api.coordination.v1beta1.LeaseSpecRspec"ô
LeaseCandidateE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata@
spec (2,.api.coordination.v1beta1.LeaseCandidateSpecRspec"ô
LeaseCandidateListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata>
items (2(.api.coordination.v1beta1.LeaseCandidateRitems"Æ
LeaseCandidateSpec
	leaseName (	R	leaseNameD
pingTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeRpingTimeF
	renewTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeR	renewTime$
binaryVersion (	RbinaryVersion*
emulationVersion (	RemulationVersion
strategy (	Rstrategy"á
	LeaseListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.coordination.v1beta1.LeaseRitems"Ì
	LeaseSpec&
holderIdentity (	RholderIdentity2
leaseDurationSeconds (RleaseDurationSecondsJ
acquireTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeRacquireTimeF
	renewTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeR	renewTime*
leaseTransitions (RleaseTransitions
strategy (	Rstrategy(
preferredHolder (	RpreferredHolderB!Zk8s.io/api/coordination/v1beta1
œ§
api/core/v1/generated.protoapi.core.v1-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"ê
 AWSElasticBlockStoreVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
	partition (R	partition
readOnly (RreadOnly"Õ
Affinity=
nodeAffinity (2.api.core.v1.NodeAffinityRnodeAffinity:
podAffinity (2.api.core.v1.PodAffinityRpodAffinityF
podAntiAffinity (2.api.core.v1.PodAntiAffinityRpodAntiAffinity"Q
AppArmorProfile
type (	Rtype*
localhostProfile (	RlocalhostProfile"D
AttachedVolume
name (	Rname

devicePath (	R
devicePath"X
	AvoidPodsK
preferAvoidPods (2!.api.core.v1.PreferAvoidPodsEntryRpreferAvoidPods"∑
AzureDiskVolumeSource
diskName (	RdiskName
diskURI (	RdiskURI 
cachingMode (	RcachingMode
fsType (	RfsType
readOnly (RreadOnly
kind (	Rkind"•
AzureFilePersistentVolumeSource

secretName (	R
secretName
	shareName (	R	shareName
readOnly (RreadOnly(
secretNamespace (	RsecretNamespace"q
AzureFileVolumeSource

secretName (	R
secretName
	shareName (	R	shareName
readOnly (RreadOnly"Ü
BindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
target (2.api.core.v1.ObjectReferenceRtarget"‰
CSIPersistentVolumeSource
driver (	Rdriver"
volumeHandle (	RvolumeHandle
readOnly (RreadOnly
fsType (	RfsTypeh
volumeAttributes (2<.api.core.v1.CSIPersistentVolumeSource.VolumeAttributesEntryRvolumeAttributes\
controllerPublishSecretRef (2.api.core.v1.SecretReferenceRcontrollerPublishSecretRefL
nodeStageSecretRef (2.api.core.v1.SecretReferenceRnodeStageSecretRefP
nodePublishSecretRef (2.api.core.v1.SecretReferenceRnodePublishSecretRefZ
controllerExpandSecretRef	 (2.api.core.v1.SecretReferenceRcontrollerExpandSecretRefN
nodeExpandSecretRef
 (2.api.core.v1.SecretReferenceRnodeExpandSecretRefC
VolumeAttributesEntry
key (	Rkey
value (	Rvalue:8"Ÿ
CSIVolumeSource
driver (	Rdriver
readOnly (RreadOnly
fsType (	RfsType^
volumeAttributes (22.api.core.v1.CSIVolumeSource.VolumeAttributesEntryRvolumeAttributesU
nodePublishSecretRef (2!.api.core.v1.LocalObjectReferenceRnodePublishSecretRefC
VolumeAttributesEntry
key (	Rkey
value (	Rvalue:8"4
Capabilities
add (	Radd
drop (	Rdrop"⁄
CephFSPersistentVolumeSource
monitors (	Rmonitors
path (	Rpath
user (	Ruser

secretFile (	R
secretFile:
	secretRef (2.api.core.v1.SecretReferenceR	secretRef
readOnly (RreadOnly"’
CephFSVolumeSource
monitors (	Rmonitors
path (	Rpath
user (	Ruser

secretFile (	R
secretFile?
	secretRef (2!.api.core.v1.LocalObjectReferenceR	secretRef
readOnly (RreadOnly"™
CinderPersistentVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
readOnly (RreadOnly:
	secretRef (2.api.core.v1.SecretReferenceR	secretRef"•
CinderVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
readOnly (RreadOnly?
	secretRef (2!.api.core.v1.LocalObjectReferenceR	secretRef"8
ClientIPConfig&
timeoutSeconds (RtimeoutSeconds"÷
ClusterTrustBundleProjection
name (	Rname

signerName (	R
signerNameR
labelSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRlabelSelector
optional (Roptional
path (	Rpath"p
ComponentCondition
type (	Rtype
status (	Rstatus
message (	Rmessage
error (	Rerror"ô
ComponentStatusE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata?

conditions (2.api.core.v1.ComponentConditionR
conditions"é
ComponentStatusListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.core.v1.ComponentStatusRitems"Ê
	ConfigMapE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
	immutable (R	immutable4
data (2 .api.core.v1.ConfigMap.DataEntryRdataF

binaryData (2&.api.core.v1.ConfigMap.BinaryDataEntryR
binaryData7
	DataEntry
key (	Rkey
value (	Rvalue:8=
BinaryDataEntry
key (	Rkey
value (Rvalue:8"á
ConfigMapEnvSourceU
localObjectReference (2!.api.core.v1.LocalObjectReferenceRlocalObjectReference
optional (Roptional"õ
ConfigMapKeySelectorU
localObjectReference (2!.api.core.v1.LocalObjectReferenceRlocalObjectReference
key (	Rkey
optional (Roptional"Ç
ConfigMapListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata,
items (2.api.core.v1.ConfigMapRitems"µ
ConfigMapNodeConfigSource
	namespace (	R	namespace
name (	Rname
uid (	Ruid(
resourceVersion (	RresourceVersion*
kubeletConfigKey (	RkubeletConfigKey"∂
ConfigMapProjectionU
localObjectReference (2!.api.core.v1.LocalObjectReferenceRlocalObjectReference,
items (2.api.core.v1.KeyToPathRitems
optional (Roptional"⁄
ConfigMapVolumeSourceU
localObjectReference (2!.api.core.v1.LocalObjectReferenceRlocalObjectReference,
items (2.api.core.v1.KeyToPathRitems 
defaultMode (RdefaultMode
optional (Roptional"£	
	Container
name (	Rname
image (	Rimage
command (	Rcommand
args (	Rargs

workingDir (	R
workingDir0
ports (2.api.core.v1.ContainerPortRports4
envFrom (2.api.core.v1.EnvFromSourceRenvFrom%
env (2.api.core.v1.EnvVarRenv?
	resources (2!.api.core.v1.ResourceRequirementsR	resourcesF
resizePolicy (2".api.core.v1.ContainerResizePolicyRresizePolicy$
restartPolicy (	RrestartPolicyQ
restartPolicyRules (2!.api.core.v1.ContainerRestartRuleRrestartPolicyRules<
volumeMounts	 (2.api.core.v1.VolumeMountRvolumeMounts?
volumeDevices (2.api.core.v1.VolumeDeviceRvolumeDevices8
livenessProbe
 (2.api.core.v1.ProbeRlivenessProbe:
readinessProbe (2.api.core.v1.ProbeRreadinessProbe6
startupProbe (2.api.core.v1.ProbeRstartupProbe4
	lifecycle (2.api.core.v1.LifecycleR	lifecycle6
terminationMessagePath (	RterminationMessagePath:
terminationMessagePolicy (	RterminationMessagePolicy(
imagePullPolicy (	RimagePullPolicyF
securityContext (2.api.core.v1.SecurityContextRsecurityContext
stdin (Rstdin
	stdinOnce (R	stdinOnce
tty (Rtty"é
 ContainerExtendedResourceRequest$
containerName (	RcontainerName"
resourceName (	RresourceName 
requestName (	RrequestName"D
ContainerImage
names (	Rnames
	sizeBytes (R	sizeBytes"ô
ContainerPort
name (	Rname
hostPort (RhostPort$
containerPort (RcontainerPort
protocol (	Rprotocol
hostIP (	RhostIP"a
ContainerResizePolicy"
resourceName (	RresourceName$
restartPolicy (	RrestartPolicy"z
ContainerRestartRule
action (	RactionJ
	exitCodes (2,.api.core.v1.ContainerRestartRuleOnExitCodesR	exitCodes"U
ContainerRestartRuleOnExitCodes
operator (	Roperator
values (Rvalues"”
ContainerState<
waiting (2".api.core.v1.ContainerStateWaitingRwaiting<
running (2".api.core.v1.ContainerStateRunningRrunningE

terminated (2%.api.core.v1.ContainerStateTerminatedR
terminated"Z
ContainerStateRunningA
	startedAt (2#.apimachinery.pkg.apis.meta.v1.TimeR	startedAt"™
ContainerStateTerminated
exitCode (RexitCode
signal (Rsignal
reason (	Rreason
message (	RmessageA
	startedAt (2#.apimachinery.pkg.apis.meta.v1.TimeR	startedAtC

finishedAt (2#.apimachinery.pkg.apis.meta.v1.TimeR
finishedAt 
containerID (	RcontainerID"I
ContainerStateWaiting
reason (	Rreason
message (	Rmessage"Ω
ContainerStatus
name (	Rname1
state (2.api.core.v1.ContainerStateRstate9
	lastState (2.api.core.v1.ContainerStateR	lastState
ready (Rready"
restartCount (RrestartCount
image (	Rimage
imageID (	RimageID 
containerID (	RcontainerID
started	 (Rstartedd
allocatedResources
 (24.api.core.v1.ContainerStatus.AllocatedResourcesEntryRallocatedResources?
	resources (2!.api.core.v1.ResourceRequirementsR	resourcesB
volumeMounts (2.api.core.v1.VolumeMountStatusRvolumeMounts.
user (2.api.core.v1.ContainerUserRuserW
allocatedResourcesStatus (2.api.core.v1.ResourceStatusRallocatedResourcesStatus

stopSignal (	R
stopSignaln
AllocatedResourcesEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"F
ContainerUser5
linux (2.api.core.v1.LinuxContainerUserRlinux"$
DaemonEndpoint
Port (RPort"Q
DownwardAPIProjection8
items (2".api.core.v1.DownwardAPIVolumeFileRitems"Õ
DownwardAPIVolumeFile
path (	Rpath<
fieldRef (2 .api.core.v1.ObjectFieldSelectorRfieldRefN
resourceFieldRef (2".api.core.v1.ResourceFieldSelectorRresourceFieldRef
mode (Rmode"u
DownwardAPIVolumeSource8
items (2".api.core.v1.DownwardAPIVolumeFileRitems 
defaultMode (RdefaultMode"u
EmptyDirVolumeSource
medium (	RmediumE
	sizeLimit (2'.apimachinery.pkg.api.resource.QuantityR	sizeLimit"ï
EndpointAddress
ip (	Rip
hostname (	Rhostname
nodeName (	RnodeName:
	targetRef (2.api.core.v1.ObjectReferenceR	targetRef"t
EndpointPort
name (	Rname
port (Rport
protocol (	Rprotocol 
appProtocol (	RappProtocol"…
EndpointSubset:
	addresses (2.api.core.v1.EndpointAddressR	addressesJ
notReadyAddresses (2.api.core.v1.EndpointAddressRnotReadyAddresses/
ports (2.api.core.v1.EndpointPortRports"â
	EndpointsE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
subsets (2.api.core.v1.EndpointSubsetRsubsets"Ç
EndpointsListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata,
items (2.api.core.v1.EndpointsRitems"®
EnvFromSource
prefix (	RprefixC
configMapRef (2.api.core.v1.ConfigMapEnvSourceRconfigMapRef:
	secretRef (2.api.core.v1.SecretEnvSourceR	secretRef"k
EnvVar
name (	Rname
value (	Rvalue7
	valueFrom (2.api.core.v1.EnvVarSourceR	valueFrom"Î
EnvVarSource<
fieldRef (2 .api.core.v1.ObjectFieldSelectorRfieldRefN
resourceFieldRef (2".api.core.v1.ResourceFieldSelectorRresourceFieldRefK
configMapKeyRef (2!.api.core.v1.ConfigMapKeySelectorRconfigMapKeyRefB
secretKeyRef (2.api.core.v1.SecretKeySelectorRsecretKeyRef<

fileKeyRef (2.api.core.v1.FileKeySelectorR
fileKeyRef"©
EphemeralContainera
ephemeralContainerCommon (2%.api.core.v1.EphemeralContainerCommonRephemeralContainerCommon0
targetContainerName (	RtargetContainerName"≤	
EphemeralContainerCommon
name (	Rname
image (	Rimage
command (	Rcommand
args (	Rargs

workingDir (	R
workingDir0
ports (2.api.core.v1.ContainerPortRports4
envFrom (2.api.core.v1.EnvFromSourceRenvFrom%
env (2.api.core.v1.EnvVarRenv?
	resources (2!.api.core.v1.ResourceRequirementsR	resourcesF
resizePolicy (2".api.core.v1.ContainerResizePolicyRresizePolicy$
restartPolicy (	RrestartPolicyQ
restartPolicyRules (2!.api.core.v1.ContainerRestartRuleRrestartPolicyRules<
volumeMounts	 (2.api.core.v1.VolumeMountRvolumeMounts?
volumeDevices (2.api.core.v1.VolumeDeviceRvolumeDevices8
livenessProbe
 (2.api.core.v1.ProbeRlivenessProbe:
readinessProbe (2.api.core.v1.ProbeRreadinessProbe6
startupProbe (2.api.core.v1.ProbeRstartupProbe4
	lifecycle (2.api.core.v1.LifecycleR	lifecycle6
terminationMessagePath (	RterminationMessagePath:
terminationMessagePolicy (	RterminationMessagePolicy(
imagePullPolicy (	RimagePullPolicyF
securityContext (2.api.core.v1.SecurityContextRsecurityContext
stdin (Rstdin
	stdinOnce (R	stdinOnce
tty (Rtty"u
EphemeralVolumeSource\
volumeClaimTemplate (2*.api.core.v1.PersistentVolumeClaimTemplateRvolumeClaimTemplate"‚
EventE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataD
involvedObject (2.api.core.v1.ObjectReferenceRinvolvedObject
reason (	Rreason
message (	Rmessage0
source (2.api.core.v1.EventSourceRsourceK
firstTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRfirstTimestampI
lastTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTimestamp
count (Rcount
type	 (	RtypeF
	eventTime
 (2(.apimachinery.pkg.apis.meta.v1.MicroTimeR	eventTime0
series (2.api.core.v1.EventSeriesRseries
action (	Raction6
related (2.api.core.v1.ObjectReferenceRrelated.
reportingComponent (	RreportingComponent,
reportingInstance (	RreportingInstance"z
	EventListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata(
items (2.api.core.v1.EventRitems"y
EventSeries
count (RcountT
lastObservedTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeRlastObservedTime"?
EventSource
	component (	R	component
host (	Rhost"&

ExecAction
command (	Rcommand"å
FCVolumeSource

targetWWNs (	R
targetWWNs
lun (Rlun
fsType (	RfsType
readOnly (RreadOnly
wwids (	Rwwids"s
FileKeySelector

volumeName (	R
volumeName
path (	Rpath
key (	Rkey
optional (Roptional"∞
FlexPersistentVolumeSource
driver (	Rdriver
fsType (	RfsType:
	secretRef (2.api.core.v1.SecretReferenceR	secretRef
readOnly (RreadOnlyN
options (24.api.core.v1.FlexPersistentVolumeSource.OptionsEntryRoptions:
OptionsEntry
key (	Rkey
value (	Rvalue:8"°
FlexVolumeSource
driver (	Rdriver
fsType (	RfsType?
	secretRef (2!.api.core.v1.LocalObjectReferenceR	secretRef
readOnly (RreadOnlyD
options (2*.api.core.v1.FlexVolumeSource.OptionsEntryRoptions:
OptionsEntry
key (	Rkey
value (	Rvalue:8"Y
FlockerVolumeSource 
datasetName (	RdatasetName 
datasetUUID (	RdatasetUUID"â
GCEPersistentDiskVolumeSource
pdName (	RpdName
fsType (	RfsType
	partition (R	partition
readOnly (RreadOnly":

GRPCAction
port (Rport
service (	Rservice"o
GitRepoVolumeSource

repository (	R
repository
revision (	Rrevision
	directory (	R	directory"ü
GlusterfsPersistentVolumeSource
	endpoints (	R	endpoints
path (	Rpath
readOnly (RreadOnly.
endpointsNamespace (	RendpointsNamespace"e
GlusterfsVolumeSource
	endpoints (	R	endpoints
path (	Rpath
readOnly (RreadOnly"…
HTTPGetAction
path (	Rpath=
port (2).apimachinery.pkg.util.intstr.IntOrStringRport
host (	Rhost
scheme (	Rscheme9
httpHeaders (2.api.core.v1.HTTPHeaderRhttpHeaders"6

HTTPHeader
name (	Rname
value (	Rvalue"9
	HostAlias
ip (	Rip
	hostnames (	R	hostnames"
HostIP
ip (	Rip">
HostPathVolumeSource
path (	Rpath
type (	Rtype"ï
ISCSIPersistentVolumeSource"
targetPortal (	RtargetPortal
iqn (	Riqn
lun (Rlun&
iscsiInterface (	RiscsiInterface
fsType (	RfsType
readOnly (RreadOnly
portals (	Rportals,
chapAuthDiscovery (RchapAuthDiscovery(
chapAuthSession (RchapAuthSession:
	secretRef
 (2.api.core.v1.SecretReferenceR	secretRef$
initiatorName (	RinitiatorName"ê
ISCSIVolumeSource"
targetPortal (	RtargetPortal
iqn (	Riqn
lun (Rlun&
iscsiInterface (	RiscsiInterface
fsType (	RfsType
readOnly (RreadOnly
portals (	Rportals,
chapAuthDiscovery (RchapAuthDiscovery(
chapAuthSession (RchapAuthSession?
	secretRef
 (2!.api.core.v1.LocalObjectReferenceR	secretRef$
initiatorName (	RinitiatorName"Q
ImageVolumeSource
	reference (	R	reference

pullPolicy (	R
pullPolicy"E
	KeyToPath
key (	Rkey
path (	Rpath
mode (Rmode"°
	Lifecycle;
	postStart (2.api.core.v1.LifecycleHandlerR	postStart7
preStop (2.api.core.v1.LifecycleHandlerRpreStop

stopSignal (	R
stopSignal"·
LifecycleHandler+
exec (2.api.core.v1.ExecActionRexec4
httpGet (2.api.core.v1.HTTPGetActionRhttpGet:
	tcpSocket (2.api.core.v1.TCPSocketActionR	tcpSocket.
sleep (2.api.core.v1.SleepActionRsleep"Ñ

LimitRangeE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.api.core.v1.LimitRangeSpecRspec"°
LimitRangeItem
type (	Rtype6
max (2$.api.core.v1.LimitRangeItem.MaxEntryRmax6
min (2$.api.core.v1.LimitRangeItem.MinEntryRminB
default (2(.api.core.v1.LimitRangeItem.DefaultEntryRdefaultW
defaultRequest (2/.api.core.v1.LimitRangeItem.DefaultRequestEntryRdefaultRequesti
maxLimitRequestRatio (25.api.core.v1.LimitRangeItem.MaxLimitRequestRatioEntryRmaxLimitRequestRatio_
MaxEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8_
MinEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8c
DefaultEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8j
DefaultRequestEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8p
MaxLimitRequestRatioEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"Ñ
LimitRangeListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata-
items (2.api.core.v1.LimitRangeRitems"E
LimitRangeSpec3
limits (2.api.core.v1.LimitRangeItemRlimits"h
LinuxContainerUser
uid (Ruid
gid (Rgid.
supplementalGroups (RsupplementalGroups"â
ListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.apimachinery.pkg.runtime.RawExtensionRitems"à
LoadBalancerIngress
ip (	Rip
hostname (	Rhostname
ipMode (	RipMode-
ports (2.api.core.v1.PortStatusRports"P
LoadBalancerStatus:
ingress (2 .api.core.v1.LoadBalancerIngressRingress"*
LocalObjectReference
name (	Rname"?
LocalVolumeSource
path (	Rpath
fsType (	RfsType"v
ModifyVolumeStatusH
targetVolumeAttributesClassName (	RtargetVolumeAttributesClassName
status (	Rstatus"Y
NFSVolumeSource
server (	Rserver
path (	Rpath
readOnly (RreadOnly"∏
	NamespaceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata.
spec (2.api.core.v1.NamespaceSpecRspec4
status (2.api.core.v1.NamespaceStatusRstatus"«
NamespaceCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"Ç
NamespaceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata,
items (2.api.core.v1.NamespaceRitems"/
NamespaceSpec

finalizers (	R
finalizers"h
NamespaceStatus
phase (	Rphase?

conditions (2.api.core.v1.NamespaceConditionR
conditions"©
NodeE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata)
spec (2.api.core.v1.NodeSpecRspec/
status (2.api.core.v1.NodeStatusRstatus";
NodeAddress
type (	Rtype
address (	Raddress"£
NodeAffinityÅ
.requiredDuringSchedulingIgnoredDuringExecution (2.api.core.v1.NodeSelectorR.requiredDuringSchedulingIgnoredDuringExecutioné
/preferredDuringSchedulingIgnoredDuringExecution (2$.api.core.v1.PreferredSchedulingTermR/preferredDuringSchedulingIgnoredDuringExecution"ï
NodeCondition
type (	Rtype
status (	RstatusQ
lastHeartbeatTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastHeartbeatTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"X
NodeConfigSourceD
	configMap (2&.api.core.v1.ConfigMapNodeConfigSourceR	configMap"ﬂ
NodeConfigStatus9
assigned (2.api.core.v1.NodeConfigSourceRassigned5
active (2.api.core.v1.NodeConfigSourceRactiveC
lastKnownGood (2.api.core.v1.NodeConfigSourceRlastKnownGood
error (	Rerror"\
NodeDaemonEndpointsE
kubeletEndpoint (2.api.core.v1.DaemonEndpointRkubeletEndpoint"J
NodeFeatures:
supplementalGroupsPolicy (RsupplementalGroupsPolicy"x
NodeListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata'
items (2.api.core.v1.NodeRitems"&
NodeProxyOptions
path (	Rpath"m
NodeRuntimeHandler
name (	RnameC
features (2'.api.core.v1.NodeRuntimeHandlerFeaturesRfeatures"~
NodeRuntimeHandlerFeatures8
recursiveReadOnlyMounts (RrecursiveReadOnlyMounts&
userNamespaces (RuserNamespaces"[
NodeSelectorK
nodeSelectorTerms (2.api.core.v1.NodeSelectorTermRnodeSelectorTerms"_
NodeSelectorRequirement
key (	Rkey
operator (	Roperator
values (	Rvalues"¨
NodeSelectorTermP
matchExpressions (2$.api.core.v1.NodeSelectorRequirementRmatchExpressionsF
matchFields (2$.api.core.v1.NodeSelectorRequirementRmatchFields"ï
NodeSpec
podCIDR (	RpodCIDR
podCIDRs (	RpodCIDRs

providerID (	R
providerID$
unschedulable (Runschedulable*
taints (2.api.core.v1.TaintRtaintsA
configSource (2.api.core.v1.NodeConfigSourceRconfigSource

externalID (	R
externalID"˛

NodeStatusA
capacity (2%.api.core.v1.NodeStatus.CapacityEntryRcapacityJ
allocatable (2(.api.core.v1.NodeStatus.AllocatableEntryRallocatable
phase (	Rphase:

conditions (2.api.core.v1.NodeConditionR
conditions6
	addresses (2.api.core.v1.NodeAddressR	addressesJ
daemonEndpoints (2 .api.core.v1.NodeDaemonEndpointsRdaemonEndpoints7
nodeInfo (2.api.core.v1.NodeSystemInfoRnodeInfo3
images (2.api.core.v1.ContainerImageRimages"
volumesInUse	 (	RvolumesInUseE
volumesAttached
 (2.api.core.v1.AttachedVolumeRvolumesAttached5
config (2.api.core.v1.NodeConfigStatusRconfigI
runtimeHandlers (2.api.core.v1.NodeRuntimeHandlerRruntimeHandlers5
features (2.api.core.v1.NodeFeaturesRfeatures*
declaredFeatures (	RdeclaredFeaturesd
CapacityEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8g
AllocatableEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8",
NodeSwapStatus
capacity (Rcapacity"≥
NodeSystemInfo
	machineID (	R	machineID

systemUUID (	R
systemUUID
bootID (	RbootID$
kernelVersion (	RkernelVersion
osImage (	RosImage8
containerRuntimeVersion (	RcontainerRuntimeVersion&
kubeletVersion (	RkubeletVersion*
kubeProxyVersion (	RkubeProxyVersion(
operatingSystem	 (	RoperatingSystem"
architecture
 (	Rarchitecture/
swap (2.api.core.v1.NodeSwapStatusRswap"S
ObjectFieldSelector

apiVersion (	R
apiVersion
	fieldPath (	R	fieldPath"—
ObjectReference
kind (	Rkind
	namespace (	R	namespace
name (	Rname
uid (	Ruid

apiVersion (	R
apiVersion(
resourceVersion (	RresourceVersion
	fieldPath (	R	fieldPath"Õ
PersistentVolumeE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
spec (2!.api.core.v1.PersistentVolumeSpecRspec;
status (2#.api.core.v1.PersistentVolumeStatusRstatus"‹
PersistentVolumeClaimE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
spec (2&.api.core.v1.PersistentVolumeClaimSpecRspec@
status (2(.api.core.v1.PersistentVolumeClaimStatusRstatus"û
PersistentVolumeClaimCondition
type (	Rtype
status (	RstatusI
lastProbeTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastProbeTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ö
PersistentVolumeClaimListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata8
items (2".api.core.v1.PersistentVolumeClaimRitems"â
PersistentVolumeClaimSpec 
accessModes (	RaccessModesH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorE
	resources (2'.api.core.v1.VolumeResourceRequirementsR	resources

volumeName (	R
volumeName*
storageClassName (	RstorageClassName

volumeMode (	R
volumeModeF

dataSource (2&.api.core.v1.TypedLocalObjectReferenceR
dataSourceG
dataSourceRef (2!.api.core.v1.TypedObjectReferenceRdataSourceRef<
volumeAttributesClassName	 (	RvolumeAttributesClassName"±
PersistentVolumeClaimStatus
phase (	Rphase 
accessModes (	RaccessModesR
capacity (26.api.core.v1.PersistentVolumeClaimStatus.CapacityEntryRcapacityK

conditions (2+.api.core.v1.PersistentVolumeClaimConditionR
conditionsp
allocatedResources (2@.api.core.v1.PersistentVolumeClaimStatus.AllocatedResourcesEntryRallocatedResourcesÖ
allocatedResourceStatuses (2G.api.core.v1.PersistentVolumeClaimStatus.AllocatedResourceStatusesEntryRallocatedResourceStatusesJ
 currentVolumeAttributesClassName (	R currentVolumeAttributesClassNameO
modifyVolumeStatus	 (2.api.core.v1.ModifyVolumeStatusRmodifyVolumeStatusd
CapacityEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8n
AllocatedResourcesEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8L
AllocatedResourceStatusesEntry
key (	Rkey
value (	Rvalue:8"¢
PersistentVolumeClaimTemplateE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
spec (2&.api.core.v1.PersistentVolumeClaimSpecRspec"]
!PersistentVolumeClaimVolumeSource
	claimName (	R	claimName
readOnly (RreadOnly"ê
PersistentVolumeListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.api.core.v1.PersistentVolumeRitems"è
PersistentVolumeSourceX
gcePersistentDisk (2*.api.core.v1.GCEPersistentDiskVolumeSourceRgcePersistentDiska
awsElasticBlockStore (2-.api.core.v1.AWSElasticBlockStoreVolumeSourceRawsElasticBlockStore=
hostPath (2!.api.core.v1.HostPathVolumeSourceRhostPathJ
	glusterfs (2,.api.core.v1.GlusterfsPersistentVolumeSourceR	glusterfs.
nfs (2.api.core.v1.NFSVolumeSourceRnfs8
rbd (2&.api.core.v1.RBDPersistentVolumeSourceRrbd>
iscsi (2(.api.core.v1.ISCSIPersistentVolumeSourceRiscsiA
cinder (2).api.core.v1.CinderPersistentVolumeSourceRcinderA
cephfs	 (2).api.core.v1.CephFSPersistentVolumeSourceRcephfs+
fc
 (2.api.core.v1.FCVolumeSourceRfc:
flocker (2 .api.core.v1.FlockerVolumeSourceRflockerG

flexVolume (2'.api.core.v1.FlexPersistentVolumeSourceR
flexVolumeJ
	azureFile (2,.api.core.v1.AzureFilePersistentVolumeSourceR	azureFileQ
vsphereVolume (2+.api.core.v1.VsphereVirtualDiskVolumeSourceRvsphereVolume:
quobyte (2 .api.core.v1.QuobyteVolumeSourceRquobyte@
	azureDisk (2".api.core.v1.AzureDiskVolumeSourceR	azureDiska
photonPersistentDisk (2-.api.core.v1.PhotonPersistentDiskVolumeSourceRphotonPersistentDiskI
portworxVolume (2!.api.core.v1.PortworxVolumeSourceRportworxVolumeD
scaleIO (2*.api.core.v1.ScaleIOPersistentVolumeSourceRscaleIO4
local (2.api.core.v1.LocalVolumeSourceRlocalJ
	storageos (2,.api.core.v1.StorageOSPersistentVolumeSourceR	storageos8
csi (2&.api.core.v1.CSIPersistentVolumeSourceRcsi"ª
PersistentVolumeSpecK
capacity (2/.api.core.v1.PersistentVolumeSpec.CapacityEntryRcapacity[
persistentVolumeSource (2#.api.core.v1.PersistentVolumeSourceRpersistentVolumeSource 
accessModes (	RaccessModes8
claimRef (2.api.core.v1.ObjectReferenceRclaimRefD
persistentVolumeReclaimPolicy (	RpersistentVolumeReclaimPolicy*
storageClassName (	RstorageClassName"
mountOptions (	RmountOptions

volumeMode (	R
volumeModeC
nodeAffinity	 (2.api.core.v1.VolumeNodeAffinityRnodeAffinity<
volumeAttributesClassName
 (	RvolumeAttributesClassNamed
CapacityEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"ø
PersistentVolumeStatus
phase (	Rphase
message (	Rmessage
reason (	Rreason]
lastPhaseTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastPhaseTransitionTime"N
 PhotonPersistentDiskVolumeSource
pdID (	RpdID
fsType (	RfsType"¶
PodE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata(
spec (2.api.core.v1.PodSpecRspec.
status (2.api.core.v1.PodStatusRstatus"•
PodAffinityÑ
.requiredDuringSchedulingIgnoredDuringExecution (2.api.core.v1.PodAffinityTermR.requiredDuringSchedulingIgnoredDuringExecutioné
/preferredDuringSchedulingIgnoredDuringExecution (2$.api.core.v1.WeightedPodAffinityTermR/preferredDuringSchedulingIgnoredDuringExecution"Ÿ
PodAffinityTermR
labelSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRlabelSelector

namespaces (	R
namespaces 
topologyKey (	RtopologyKeyZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelector&
matchLabelKeys (	RmatchLabelKeys,
mismatchLabelKeys (	RmismatchLabelKeys"©
PodAntiAffinityÑ
.requiredDuringSchedulingIgnoredDuringExecution (2.api.core.v1.PodAffinityTermR.requiredDuringSchedulingIgnoredDuringExecutioné
/preferredDuringSchedulingIgnoredDuringExecution (2$.api.core.v1.WeightedPodAffinityTermR/preferredDuringSchedulingIgnoredDuringExecution"à
PodAttachOptions
stdin (Rstdin
stdout (Rstdout
stderr (Rstderr
tty (Rtty
	container (	R	container"¥
PodCertificateProjection

signerName (	R
signerName
keyType (	RkeyType2
maxExpirationSeconds (RmaxExpirationSeconds2
credentialBundlePath (	RcredentialBundlePath
keyPath (	RkeyPath2
certificateChainPath (	RcertificateChainPathd
userAnnotations (2:.api.core.v1.PodCertificateProjection.UserAnnotationsEntryRuserAnnotationsB
UserAnnotationsEntry
key (	Rkey
value (	Rvalue:8"º
PodCondition
type (	Rtype.
observedGeneration (RobservedGeneration
status (	RstatusI
lastProbeTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastProbeTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"á
PodDNSConfig 
nameservers (	Rnameservers
searches (	Rsearches9
options (2.api.core.v1.PodDNSConfigOptionRoptions">
PodDNSConfigOption
name (	Rname
value (	Rvalue"†
PodExecOptions
stdin (Rstdin
stdout (Rstdout
stderr (Rstderr
tty (Rtty
	container (	R	container
command (	Rcommand"ß
PodExtendedResourceClaimStatusW
requestMappings (2-.api.core.v1.ContainerExtendedResourceRequestRrequestMappings,
resourceClaimName (	RresourceClaimName"
PodIP
ip (	Rip"v
PodListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata&
items (2.api.core.v1.PodRitems"Ç
PodLogOptions
	container (	R	container
follow (Rfollow
previous (Rprevious"
sinceSeconds (RsinceSecondsA
	sinceTime (2#.apimachinery.pkg.apis.meta.v1.TimeR	sinceTime

timestamps (R
timestamps
	tailLines (R	tailLines

limitBytes (R
limitBytesB
insecureSkipTLSVerifyBackend	 (RinsecureSkipTLSVerifyBackend
stream
 (	Rstream"
PodOS
name (	Rname"-
PodPortForwardOptions
ports (Rports"%
PodProxyOptions
path (	Rpath"8
PodReadinessGate$
conditionType (	RconditionType"í
PodResourceClaim
name (	Rname,
resourceClaimName (	RresourceClaimName<
resourceClaimTemplateName (	RresourceClaimTemplateName"Z
PodResourceClaimStatus
name (	Rname,
resourceClaimName (	RresourceClaimName"'
PodSchedulingGate
name (	Rname"µ
PodSecurityContextC
seLinuxOptions (2.api.core.v1.SELinuxOptionsRseLinuxOptionsR
windowsOptions (2*.api.core.v1.WindowsSecurityContextOptionsRwindowsOptions
	runAsUser (R	runAsUser

runAsGroup (R
runAsGroup"
runAsNonRoot (RrunAsNonRoot.
supplementalGroups (RsupplementalGroups:
supplementalGroupsPolicy (	RsupplementalGroupsPolicy
fsGroup (RfsGroup-
sysctls (2.api.core.v1.SysctlRsysctls0
fsGroupChangePolicy	 (	RfsGroupChangePolicyC
seccompProfile
 (2.api.core.v1.SeccompProfileRseccompProfileF
appArmorProfile (2.api.core.v1.AppArmorProfileRappArmorProfile0
seLinuxChangePolicy (	RseLinuxChangePolicy"c
PodSignatureS
podController (2-.apimachinery.pkg.apis.meta.v1.OwnerReferenceRpodController"√
PodSpec-
volumes (2.api.core.v1.VolumeRvolumes>
initContainers (2.api.core.v1.ContainerRinitContainers6

containers (2.api.core.v1.ContainerR
containersQ
ephemeralContainers" (2.api.core.v1.EphemeralContainerRephemeralContainers$
restartPolicy (	RrestartPolicyD
terminationGracePeriodSeconds (RterminationGracePeriodSeconds4
activeDeadlineSeconds (RactiveDeadlineSeconds
	dnsPolicy (	R	dnsPolicyJ
nodeSelector (2&.api.core.v1.PodSpec.NodeSelectorEntryRnodeSelector.
serviceAccountName (	RserviceAccountName&
serviceAccount	 (	RserviceAccountB
automountServiceAccountToken (RautomountServiceAccountToken
nodeName
 (	RnodeName 
hostNetwork (RhostNetwork
hostPID (RhostPID
hostIPC (RhostIPC4
shareProcessNamespace (RshareProcessNamespaceI
securityContext (2.api.core.v1.PodSecurityContextRsecurityContextM
imagePullSecrets (2!.api.core.v1.LocalObjectReferenceRimagePullSecrets
hostname (	Rhostname
	subdomain (	R	subdomain1
affinity (2.api.core.v1.AffinityRaffinity$
schedulerName (	RschedulerName9
tolerations (2.api.core.v1.TolerationRtolerations8
hostAliases (2.api.core.v1.HostAliasRhostAliases,
priorityClassName (	RpriorityClassName
priority (Rpriority7
	dnsConfig (2.api.core.v1.PodDNSConfigR	dnsConfigE
readinessGates (2.api.core.v1.PodReadinessGateRreadinessGates*
runtimeClassName (	RruntimeClassName.
enableServiceLinks (RenableServiceLinks*
preemptionPolicy (	RpreemptionPolicy>
overhead  (2".api.core.v1.PodSpec.OverheadEntryRoverheadc
topologySpreadConstraints! (2%.api.core.v1.TopologySpreadConstraintRtopologySpreadConstraints,
setHostnameAsFQDN# (RsetHostnameAsFQDN"
os$ (2.api.core.v1.PodOSRos
	hostUsers% (R	hostUsersH
schedulingGates& (2.api.core.v1.PodSchedulingGateRschedulingGatesE
resourceClaims' (2.api.core.v1.PodResourceClaimRresourceClaims?
	resources( (2!.api.core.v1.ResourceRequirementsR	resources*
hostnameOverride) (	RhostnameOverride@
workloadRef* (2.api.core.v1.WorkloadReferenceRworkloadRef?
NodeSelectorEntry
key (	Rkey
value (	Rvalue:8d
OverheadEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"≈	
	PodStatus.
observedGeneration (RobservedGeneration
phase (	Rphase9

conditions (2.api.core.v1.PodConditionR
conditions
message (	Rmessage
reason (	Rreason,
nominatedNodeName (	RnominatedNodeName
hostIP (	RhostIP-
hostIPs (2.api.core.v1.HostIPRhostIPs
podIP (	RpodIP*
podIPs (2.api.core.v1.PodIPRpodIPsA
	startTime (2#.apimachinery.pkg.apis.meta.v1.TimeR	startTimeR
initContainerStatuses
 (2.api.core.v1.ContainerStatusRinitContainerStatusesJ
containerStatuses (2.api.core.v1.ContainerStatusRcontainerStatuses
qosClass	 (	RqosClass\
ephemeralContainerStatuses (2.api.core.v1.ContainerStatusRephemeralContainerStatuses
resize (	RresizeY
resourceClaimStatuses (2#.api.core.v1.PodResourceClaimStatusRresourceClaimStatusesm
extendedResourceClaimStatus (2+.api.core.v1.PodExtendedResourceClaimStatusRextendedResourceClaimStatus^
allocatedResources (2..api.core.v1.PodStatus.AllocatedResourcesEntryRallocatedResources?
	resources (2!.api.core.v1.ResourceRequirementsR	resourcesn
AllocatedResourcesEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"à
PodStatusResultE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata.
status (2.api.core.v1.PodStatusRstatus"é
PodTemplateE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata8
template (2.api.core.v1.PodTemplateSpecRtemplate"Ü
PodTemplateListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata.
items (2.api.core.v1.PodTemplateRitems"Ç
PodTemplateSpecE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata(
spec (2.api.core.v1.PodSpecRspec"R

PortStatus
port (Rport
protocol (	Rprotocol
error (	Rerror"f
PortworxVolumeSource
volumeID (	RvolumeID
fsType (	RfsType
readOnly (RreadOnly"!
Preconditions
uid (	Ruid"–
PreferAvoidPodsEntry=
podSignature (2.api.core.v1.PodSignatureRpodSignatureG
evictionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRevictionTime
reason (	Rreason
message (	Rmessage"p
PreferredSchedulingTerm
weight (Rweight=

preference (2.api.core.v1.NodeSelectorTermR
preference"⁄
Probe3
handler (2.api.core.v1.ProbeHandlerRhandler0
initialDelaySeconds (RinitialDelaySeconds&
timeoutSeconds (RtimeoutSeconds$
periodSeconds (RperiodSeconds*
successThreshold (RsuccessThreshold*
failureThreshold (RfailureThresholdD
terminationGracePeriodSeconds (RterminationGracePeriodSeconds"⁄
ProbeHandler+
exec (2.api.core.v1.ExecActionRexec4
httpGet (2.api.core.v1.HTTPGetActionRhttpGet:
	tcpSocket (2.api.core.v1.TCPSocketActionR	tcpSocket+
grpc (2.api.core.v1.GRPCActionRgrpc"r
ProjectedVolumeSource7
sources (2.api.core.v1.VolumeProjectionRsources 
defaultMode (RdefaultMode"ß
QuobyteVolumeSource
registry (	Rregistry
volume (	Rvolume
readOnly (RreadOnly
user (	Ruser
group (	Rgroup
tenant (	Rtenant"ˇ
RBDPersistentVolumeSource
monitors (	Rmonitors
image (	Rimage
fsType (	RfsType
pool (	Rpool
user (	Ruser
keyring (	Rkeyring:
	secretRef (2.api.core.v1.SecretReferenceR	secretRef
readOnly (RreadOnly"˙
RBDVolumeSource
monitors (	Rmonitors
image (	Rimage
fsType (	RfsType
pool (	Rpool
user (	Ruser
keyring (	Rkeyring?
	secretRef (2!.api.core.v1.LocalObjectReferenceR	secretRef
readOnly (RreadOnly"Ç
RangeAllocationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
range (	Rrange
data (Rdata"‹
ReplicationControllerE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
spec (2&.api.core.v1.ReplicationControllerSpecRspec@
status (2(.api.core.v1.ReplicationControllerStatusRstatus"”
ReplicationControllerCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ö
ReplicationControllerListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata8
items (2".api.core.v1.ReplicationControllerRitems"™
ReplicationControllerSpec
replicas (Rreplicas(
minReadySeconds (RminReadySecondsP
selector (24.api.core.v1.ReplicationControllerSpec.SelectorEntryRselector8
template (2.api.core.v1.PodTemplateSpecRtemplate;
SelectorEntry
key (	Rkey
value (	Rvalue:8"æ
ReplicationControllerStatus
replicas (Rreplicas2
fullyLabeledReplicas (RfullyLabeledReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas.
observedGeneration (RobservedGenerationK

conditions (2+.api.core.v1.ReplicationControllerConditionR
conditions"=
ResourceClaim
name (	Rname
request (	Rrequest"ú
ResourceFieldSelector$
containerName (	RcontainerName
resource (	RresourceA
divisor (2'.apimachinery.pkg.api.resource.QuantityRdivisor"H
ResourceHealth

resourceID (	R
resourceID
health (	Rhealth"ƒ
ResourceQuotaE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata2
spec (2.api.core.v1.ResourceQuotaSpecRspec8
status (2 .api.core.v1.ResourceQuotaStatusRstatus"ä
ResourceQuotaListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata0
items (2.api.core.v1.ResourceQuotaRitems"ç
ResourceQuotaSpec<
hard (2(.api.core.v1.ResourceQuotaSpec.HardEntryRhard
scopes (	Rscopes@
scopeSelector (2.api.core.v1.ScopeSelectorRscopeSelector`
	HardEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"Ÿ
ResourceQuotaStatus>
hard (2*.api.core.v1.ResourceQuotaStatus.HardEntryRhard>
used (2*.api.core.v1.ResourceQuotaStatus.UsedEntryRused`
	HardEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8`
	UsedEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"®
ResourceRequirementsE
limits (2-.api.core.v1.ResourceRequirements.LimitsEntryRlimitsK
requests (2/.api.core.v1.ResourceRequirements.RequestsEntryRrequests2
claims (2.api.core.v1.ResourceClaimRclaimsb
LimitsEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8d
RequestsEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"_
ResourceStatus
name (	Rname9
	resources (2.api.core.v1.ResourceHealthR	resources"b
SELinuxOptions
user (	Ruser
role (	Rrole
type (	Rtype
level (	Rlevel"Ò
ScaleIOPersistentVolumeSource
gateway (	Rgateway
system (	Rsystem:
	secretRef (2.api.core.v1.SecretReferenceR	secretRef

sslEnabled (R
sslEnabled*
protectionDomain (	RprotectionDomain 
storagePool (	RstoragePool 
storageMode (	RstorageMode

volumeName (	R
volumeName
fsType	 (	RfsType
readOnly
 (RreadOnly"Ï
ScaleIOVolumeSource
gateway (	Rgateway
system (	Rsystem?
	secretRef (2!.api.core.v1.LocalObjectReferenceR	secretRef

sslEnabled (R
sslEnabled*
protectionDomain (	RprotectionDomain 
storagePool (	RstoragePool 
storageMode (	RstorageMode

volumeName (	R
volumeName
fsType	 (	RfsType
readOnly
 (RreadOnly"k
ScopeSelectorZ
matchExpressions (2..api.core.v1.ScopedResourceSelectorRequirementRmatchExpressions"u
!ScopedResourceSelectorRequirement
	scopeName (	R	scopeName
operator (	Roperator
values (	Rvalues"P
SeccompProfile
type (	Rtype*
localhostProfile (	RlocalhostProfile"Ò
SecretE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
	immutable (R	immutable1
data (2.api.core.v1.Secret.DataEntryRdataC

stringData (2#.api.core.v1.Secret.StringDataEntryR
stringData
type (	Rtype7
	DataEntry
key (	Rkey
value (Rvalue:8=
StringDataEntry
key (	Rkey
value (	Rvalue:8"Ñ
SecretEnvSourceU
localObjectReference (2!.api.core.v1.LocalObjectReferenceRlocalObjectReference
optional (Roptional"ò
SecretKeySelectorU
localObjectReference (2!.api.core.v1.LocalObjectReferenceRlocalObjectReference
key (	Rkey
optional (Roptional"|

SecretListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata)
items (2.api.core.v1.SecretRitems"≥
SecretProjectionU
localObjectReference (2!.api.core.v1.LocalObjectReferenceRlocalObjectReference,
items (2.api.core.v1.KeyToPathRitems
optional (Roptional"C
SecretReference
name (	Rname
	namespace (	R	namespace"†
SecretVolumeSource

secretName (	R
secretName,
items (2.api.core.v1.KeyToPathRitems 
defaultMode (RdefaultMode
optional (Roptional"ä
SecurityContext=
capabilities (2.api.core.v1.CapabilitiesRcapabilities

privileged (R
privilegedC
seLinuxOptions (2.api.core.v1.SELinuxOptionsRseLinuxOptionsR
windowsOptions
 (2*.api.core.v1.WindowsSecurityContextOptionsRwindowsOptions
	runAsUser (R	runAsUser

runAsGroup (R
runAsGroup"
runAsNonRoot (RrunAsNonRoot6
readOnlyRootFilesystem (RreadOnlyRootFilesystem:
allowPrivilegeEscalation (RallowPrivilegeEscalation
	procMount	 (	R	procMountC
seccompProfile (2.api.core.v1.SeccompProfileRseccompProfileF
appArmorProfile (2.api.core.v1.AppArmorProfileRappArmorProfile"Q
SerializedReference:
	reference (2.api.core.v1.ObjectReferenceR	reference"≤
ServiceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata,
spec (2.api.core.v1.ServiceSpecRspec2
status (2.api.core.v1.ServiceStatusRstatus"¢
ServiceAccountE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
secrets (2.api.core.v1.ObjectReferenceRsecretsM
imagePullSecrets (2!.api.core.v1.LocalObjectReferenceRimagePullSecretsB
automountServiceAccountToken (RautomountServiceAccountToken"å
ServiceAccountListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata1
items (2.api.core.v1.ServiceAccountRitems"}
ServiceAccountTokenProjection
audience (	Raudience,
expirationSeconds (RexpirationSeconds
path (	Rpath"~
ServiceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata*
items (2.api.core.v1.ServiceRitems"⁄
ServicePort
name (	Rname
protocol (	Rprotocol 
appProtocol (	RappProtocol
port (RportI

targetPort (2).apimachinery.pkg.util.intstr.IntOrStringR
targetPort
nodePort (RnodePort")
ServiceProxyOptions
path (	Rpath"Ü
ServiceSpec.
ports (2.api.core.v1.ServicePortRportsB
selector (2&.api.core.v1.ServiceSpec.SelectorEntryRselector
	clusterIP (	R	clusterIP

clusterIPs (	R
clusterIPs
type (	Rtype 
externalIPs (	RexternalIPs(
sessionAffinity (	RsessionAffinity&
loadBalancerIP (	RloadBalancerIP:
loadBalancerSourceRanges	 (	RloadBalancerSourceRanges"
externalName
 (	RexternalName4
externalTrafficPolicy (	RexternalTrafficPolicy0
healthCheckNodePort (RhealthCheckNodePort:
publishNotReadyAddresses (RpublishNotReadyAddressesX
sessionAffinityConfig (2".api.core.v1.SessionAffinityConfigRsessionAffinityConfig

ipFamilies (	R
ipFamilies&
ipFamilyPolicy (	RipFamilyPolicyD
allocateLoadBalancerNodePorts (RallocateLoadBalancerNodePorts,
loadBalancerClass (	RloadBalancerClass4
internalTrafficPolicy (	RinternalTrafficPolicy0
trafficDistribution (	RtrafficDistribution;
SelectorEntry
key (	Rkey
value (	Rvalue:8"û
ServiceStatusC
loadBalancer (2.api.core.v1.LoadBalancerStatusRloadBalancerH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"P
SessionAffinityConfig7
clientIP (2.api.core.v1.ClientIPConfigRclientIP"'
SleepAction
seconds (Rseconds"€
StorageOSPersistentVolumeSource

volumeName (	R
volumeName(
volumeNamespace (	RvolumeNamespace
fsType (	RfsType
readOnly (RreadOnly:
	secretRef (2.api.core.v1.ObjectReferenceR	secretRef"÷
StorageOSVolumeSource

volumeName (	R
volumeName(
volumeNamespace (	RvolumeNamespace
fsType (	RfsType
readOnly (RreadOnly?
	secretRef (2!.api.core.v1.LocalObjectReferenceR	secretRef"2
Sysctl
name (	Rname
value (	Rvalue"d
TCPSocketAction=
port (2).apimachinery.pkg.util.intstr.IntOrStringRport
host (	Rhost"ä
Taint
key (	Rkey
value (	Rvalue
effect (	ReffectA
	timeAdded (2#.apimachinery.pkg.apis.meta.v1.TimeR	timeAdded"ñ

Toleration
key (	Rkey
operator (	Roperator
value (	Rvalue
effect (	Reffect,
tolerationSeconds (RtolerationSeconds"L
 TopologySelectorLabelRequirement
key (	Rkey
values (	Rvalues"{
TopologySelectorTermc
matchLabelExpressions (2-.api.core.v1.TopologySelectorLabelRequirementRmatchLabelExpressions"¸
TopologySpreadConstraint
maxSkew (RmaxSkew 
topologyKey (	RtopologyKey,
whenUnsatisfiable (	RwhenUnsatisfiableR
labelSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRlabelSelector

minDomains (R
minDomains.
nodeAffinityPolicy (	RnodeAffinityPolicy*
nodeTaintsPolicy (	RnodeTaintsPolicy&
matchLabelKeys (	RmatchLabelKeys"_
TypedLocalObjectReference
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"x
TypedObjectReference
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname
	namespace (	R	namespace"[
Volume
name (	Rname=
volumeSource (2.api.core.v1.VolumeSourceRvolumeSource"B
VolumeDevice
name (	Rname

devicePath (	R
devicePath"Ò
VolumeMount
name (	Rname
readOnly (RreadOnly,
recursiveReadOnly (	RrecursiveReadOnly
	mountPath (	R	mountPath
subPath (	RsubPath*
mountPropagation (	RmountPropagation 
subPathExpr (	RsubPathExpr"è
VolumeMountStatus
name (	Rname
	mountPath (	R	mountPath
readOnly (RreadOnly,
recursiveReadOnly (	RrecursiveReadOnly"K
VolumeNodeAffinity5
required (2.api.core.v1.NodeSelectorRrequired"◊
VolumeProjection5
secret (2.api.core.v1.SecretProjectionRsecretD
downwardAPI (2".api.core.v1.DownwardAPIProjectionRdownwardAPI>
	configMap (2 .api.core.v1.ConfigMapProjectionR	configMap\
serviceAccountToken (2*.api.core.v1.ServiceAccountTokenProjectionRserviceAccountTokenY
clusterTrustBundle (2).api.core.v1.ClusterTrustBundleProjectionRclusterTrustBundleM
podCertificate (2%.api.core.v1.PodCertificateProjectionRpodCertificate"Ü
VolumeResourceRequirementsK
limits (23.api.core.v1.VolumeResourceRequirements.LimitsEntryRlimitsQ
requests (25.api.core.v1.VolumeResourceRequirements.RequestsEntryRrequestsb
LimitsEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8d
RequestsEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"…
VolumeSource=
hostPath (2!.api.core.v1.HostPathVolumeSourceRhostPath=
emptyDir (2!.api.core.v1.EmptyDirVolumeSourceRemptyDirX
gcePersistentDisk (2*.api.core.v1.GCEPersistentDiskVolumeSourceRgcePersistentDiska
awsElasticBlockStore (2-.api.core.v1.AWSElasticBlockStoreVolumeSourceRawsElasticBlockStore:
gitRepo (2 .api.core.v1.GitRepoVolumeSourceRgitRepo7
secret (2.api.core.v1.SecretVolumeSourceRsecret.
nfs (2.api.core.v1.NFSVolumeSourceRnfs4
iscsi (2.api.core.v1.ISCSIVolumeSourceRiscsi@
	glusterfs	 (2".api.core.v1.GlusterfsVolumeSourceR	glusterfsd
persistentVolumeClaim
 (2..api.core.v1.PersistentVolumeClaimVolumeSourceRpersistentVolumeClaim.
rbd (2.api.core.v1.RBDVolumeSourceRrbd=

flexVolume (2.api.core.v1.FlexVolumeSourceR
flexVolume7
cinder (2.api.core.v1.CinderVolumeSourceRcinder7
cephfs (2.api.core.v1.CephFSVolumeSourceRcephfs:
flocker (2 .api.core.v1.FlockerVolumeSourceRflockerF
downwardAPI (2$.api.core.v1.DownwardAPIVolumeSourceRdownwardAPI+
fc (2.api.core.v1.FCVolumeSourceRfc@
	azureFile (2".api.core.v1.AzureFileVolumeSourceR	azureFile@
	configMap (2".api.core.v1.ConfigMapVolumeSourceR	configMapQ
vsphereVolume (2+.api.core.v1.VsphereVirtualDiskVolumeSourceRvsphereVolume:
quobyte (2 .api.core.v1.QuobyteVolumeSourceRquobyte@
	azureDisk (2".api.core.v1.AzureDiskVolumeSourceR	azureDiska
photonPersistentDisk (2-.api.core.v1.PhotonPersistentDiskVolumeSourceRphotonPersistentDisk@
	projected (2".api.core.v1.ProjectedVolumeSourceR	projectedI
portworxVolume (2!.api.core.v1.PortworxVolumeSourceRportworxVolume:
scaleIO (2 .api.core.v1.ScaleIOVolumeSourceRscaleIO@
	storageos (2".api.core.v1.StorageOSVolumeSourceR	storageos.
csi (2.api.core.v1.CSIVolumeSourceRcsi@
	ephemeral (2".api.core.v1.EphemeralVolumeSourceR	ephemeral4
image (2.api.core.v1.ImageVolumeSourceRimage"∞
VsphereVirtualDiskVolumeSource

volumePath (	R
volumePath
fsType (	RfsType,
storagePolicyName (	RstoragePolicyName(
storagePolicyID (	RstoragePolicyID"y
WeightedPodAffinityTerm
weight (RweightF
podAffinityTerm (2.api.core.v1.PodAffinityTermRpodAffinityTerm"œ
WindowsSecurityContextOptions6
gmsaCredentialSpecName (	RgmsaCredentialSpecName.
gmsaCredentialSpec (	RgmsaCredentialSpec$
runAsUserName (	RrunAsUserName 
hostProcess (RhostProcess"s
WorkloadReference
name (	Rname
podGroup (	RpodGroup.
podGroupReplicaKey (	RpodGroupReplicaKeyBZk8s.io/api/core/v1
È
 api/discovery/v1/generated.protoapi.discovery.v1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ÿ
Endpoint
	addresses (	R	addressesD

conditions (2$.api.discovery.v1.EndpointConditionsR
conditions
hostname (	Rhostname:
	targetRef (2.api.core.v1.ObjectReferenceR	targetRefb
deprecatedTopology (22.api.discovery.v1.Endpoint.DeprecatedTopologyEntryRdeprecatedTopology
nodeName (	RnodeName
zone (	Rzone5
hints (2.api.discovery.v1.EndpointHintsRhintsE
DeprecatedTopologyEntry
key (	Rkey
value (	Rvalue:8"f
EndpointConditions
ready (Rready
serving (Rserving 
terminating (Rterminating"}
EndpointHints5
forZones (2.api.discovery.v1.ForZoneRforZones5
forNodes (2.api.discovery.v1.ForNodeRforNodes"t
EndpointPort
name (	Rname
protocol (	Rprotocol
port (Rport 
appProtocol (	RappProtocol"Ë
EndpointSliceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata 
addressType (	RaddressType8
	endpoints (2.api.discovery.v1.EndpointR	endpoints4
ports (2.api.discovery.v1.EndpointPortRports"è
EndpointSliceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.discovery.v1.EndpointSliceRitems"
ForNode
name (	Rname"
ForZone
name (	RnameBZk8s.io/api/discovery/v1
Â
%api/discovery/v1beta1/generated.protoapi.discovery.v1beta1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"´
Endpoint
	addresses (	R	addressesI

conditions (2).api.discovery.v1beta1.EndpointConditionsR
conditions
hostname (	Rhostname:
	targetRef (2.api.core.v1.ObjectReferenceR	targetRefI
topology (2-.api.discovery.v1beta1.Endpoint.TopologyEntryRtopology
nodeName (	RnodeName:
hints (2$.api.discovery.v1beta1.EndpointHintsRhints;
TopologyEntry
key (	Rkey
value (	Rvalue:8"f
EndpointConditions
ready (Rready
serving (Rserving 
terminating (Rterminating"á
EndpointHints:
forZones (2.api.discovery.v1beta1.ForZoneRforZones:
forNodes (2.api.discovery.v1beta1.ForNodeRforNodes"t
EndpointPort
name (	Rname
protocol (	Rprotocol
port (Rport 
appProtocol (	RappProtocol"Ú
EndpointSliceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata 
addressType (	RaddressType=
	endpoints (2.api.discovery.v1beta1.EndpointR	endpoints9
ports (2#.api.discovery.v1beta1.EndpointPortRports"î
EndpointSliceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata:
items (2$.api.discovery.v1beta1.EndpointSliceRitems"
ForNode
name (	Rname"
ForZone
name (	RnameBZk8s.io/api/discovery/v1beta1
è

api/events/v1/generated.protoapi.events.v1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"¶
EventE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
	eventTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeR	eventTime2
series (2.api.events.v1.EventSeriesRseries0
reportingController (	RreportingController,
reportingInstance (	RreportingInstance
action (	Raction
reason (	Rreason:
	regarding (2.api.core.v1.ObjectReferenceR	regarding6
related	 (2.api.core.v1.ObjectReferenceRrelated
note
 (	Rnote
type (	RtypeD
deprecatedSource (2.api.core.v1.EventSourceRdeprecatedSource_
deprecatedFirstTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRdeprecatedFirstTimestamp]
deprecatedLastTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRdeprecatedLastTimestamp(
deprecatedCount (RdeprecatedCount"|
	EventListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata*
items (2.api.events.v1.EventRitems"y
EventSeries
count (RcountT
lastObservedTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeRlastObservedTimeBZk8s.io/api/events/v1
©

"api/events/v1beta1/generated.protoapi.events.v1beta1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"´
EventE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
	eventTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeR	eventTime7
series (2.api.events.v1beta1.EventSeriesRseries0
reportingController (	RreportingController,
reportingInstance (	RreportingInstance
action (	Raction
reason (	Rreason:
	regarding (2.api.core.v1.ObjectReferenceR	regarding6
related	 (2.api.core.v1.ObjectReferenceRrelated
note
 (	Rnote
type (	RtypeD
deprecatedSource (2.api.core.v1.EventSourceRdeprecatedSource_
deprecatedFirstTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRdeprecatedFirstTimestamp]
deprecatedLastTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRdeprecatedLastTimestamp(
deprecatedCount (RdeprecatedCount"Å
	EventListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata/
items (2.api.events.v1beta1.EventRitems"y
EventSeries
count (RcountT
lastObservedTime (2(.apimachinery.pkg.apis.meta.v1.MicroTimeRlastObservedTimeBZk8s.io/api/events/v1beta1
öF
&api/extensions/v1beta1/generated.protoapi.extensions.v1beta1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"Œ
	DaemonSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata9
spec (2%.api.extensions.v1beta1.DaemonSetSpecRspec?
status (2'.api.extensions.v1beta1.DaemonSetStatusRstatus"«
DaemonSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ç
DaemonSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.api.extensions.v1beta1.DaemonSetRitems"˙
DaemonSetSpecH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplateW
updateStrategy (2/.api.extensions.v1beta1.DaemonSetUpdateStrategyRupdateStrategy(
minReadySeconds (RminReadySeconds.
templateGeneration (RtemplateGeneration2
revisionHistoryLimit (RrevisionHistoryLimit"á
DaemonSetStatus6
currentNumberScheduled (RcurrentNumberScheduled.
numberMisscheduled (RnumberMisscheduled6
desiredNumberScheduled (RdesiredNumberScheduled 
numberReady (RnumberReady.
observedGeneration (RobservedGeneration6
updatedNumberScheduled (RupdatedNumberScheduled(
numberAvailable (RnumberAvailable,
numberUnavailable (RnumberUnavailable&
collisionCount	 (RcollisionCountJ

conditions
 (2*.api.extensions.v1beta1.DaemonSetConditionR
conditions"É
DaemonSetUpdateStrategy
type (	RtypeT
rollingUpdate (2..api.extensions.v1beta1.RollingUpdateDaemonSetRrollingUpdate"—

DeploymentE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
spec (2&.api.extensions.v1beta1.DeploymentSpecRspec@
status (2(.api.extensions.v1beta1.DeploymentStatusRstatus"ï
DeploymentCondition
type (	Rtype
status (	RstatusK
lastUpdateTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastUpdateTimeS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"è
DeploymentListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata8
items (2".api.extensions.v1beta1.DeploymentRitems"´
DeploymentRollback
name (	Rnamer
updatedAnnotations (2B.api.extensions.v1beta1.DeploymentRollback.UpdatedAnnotationsEntryRupdatedAnnotationsF

rollbackTo (2&.api.extensions.v1beta1.RollbackConfigR
rollbackToE
UpdatedAnnotationsEntry
key (	Rkey
value (	Rvalue:8"
DeploymentSpec
replicas (RreplicasH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplateF
strategy (2*.api.extensions.v1beta1.DeploymentStrategyRstrategy(
minReadySeconds (RminReadySeconds2
revisionHistoryLimit (RrevisionHistoryLimit
paused (RpausedF

rollbackTo (2&.api.extensions.v1beta1.RollbackConfigR
rollbackTo8
progressDeadlineSeconds	 (RprogressDeadlineSeconds"µ
DeploymentStatus.
observedGeneration (RobservedGeneration
replicas (Rreplicas(
updatedReplicas (RupdatedReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
unavailableReplicas (RunavailableReplicas0
terminatingReplicas	 (RterminatingReplicasK

conditions (2+.api.extensions.v1beta1.DeploymentConditionR
conditions&
collisionCount (RcollisionCount"
DeploymentStrategy
type (	RtypeU
rollingUpdate (2/.api.extensions.v1beta1.RollingUpdateDeploymentRrollingUpdate"É
HTTPIngressPath
path (	Rpath
pathType (	RpathType@
backend (2&.api.extensions.v1beta1.IngressBackendRbackend"U
HTTPIngressRuleValue=
paths (2'.api.extensions.v1beta1.HTTPIngressPathRpaths"5
IPBlock
cidr (	Rcidr
except (	Rexcept"»
IngressE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
spec (2#.api.extensions.v1beta1.IngressSpecRspec=
status (2%.api.extensions.v1beta1.IngressStatusRstatus"√
IngressBackend 
serviceName (	RserviceNameK
servicePort (2).apimachinery.pkg.util.intstr.IntOrStringRservicePortB
resource (2&.api.core.v1.TypedLocalObjectReferenceRresource"â
IngressListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.extensions.v1beta1.IngressRitems"â
IngressLoadBalancerIngress
ip (	Rip
hostname (	Rhostname?
ports (2).api.extensions.v1beta1.IngressPortStatusRports"i
IngressLoadBalancerStatusL
ingress (22.api.extensions.v1beta1.IngressLoadBalancerIngressRingress"Y
IngressPortStatus
port (Rport
protocol (	Rprotocol
error (	Rerror"w
IngressRule
host (	RhostT
ingressRuleValue (2(.api.extensions.v1beta1.IngressRuleValueRingressRuleValue"T
IngressRuleValue@
http (2,.api.extensions.v1beta1.HTTPIngressRuleValueRhttp"Ï
IngressSpec*
ingressClassName (	RingressClassName@
backend (2&.api.extensions.v1beta1.IngressBackendRbackend4
tls (2".api.extensions.v1beta1.IngressTLSRtls9
rules (2#.api.extensions.v1beta1.IngressRuleRrules"f
IngressStatusU
loadBalancer (21.api.extensions.v1beta1.IngressLoadBalancerStatusRloadBalancer"B

IngressTLS
hosts (	Rhosts

secretName (	R
secretName"ï
NetworkPolicyE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata=
spec (2).api.extensions.v1beta1.NetworkPolicySpecRspec"ï
NetworkPolicyEgressRule?
ports (2).api.extensions.v1beta1.NetworkPolicyPortRports9
to (2).api.extensions.v1beta1.NetworkPolicyPeerRto"ö
NetworkPolicyIngressRule?
ports (2).api.extensions.v1beta1.NetworkPolicyPortRports=
from (2).api.extensions.v1beta1.NetworkPolicyPeerRfrom"ï
NetworkPolicyListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata;
items (2%.api.extensions.v1beta1.NetworkPolicyRitems"˙
NetworkPolicyPeerN
podSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRpodSelectorZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelector9
ipBlock (2.api.extensions.v1beta1.IPBlockRipBlock"à
NetworkPolicyPort
protocol (	Rprotocol=
port (2).apimachinery.pkg.util.intstr.IntOrStringRport
endPort (RendPort"ö
NetworkPolicySpecN
podSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRpodSelectorJ
ingress (20.api.extensions.v1beta1.NetworkPolicyIngressRuleRingressG
egress (2/.api.extensions.v1beta1.NetworkPolicyEgressRuleRegress 
policyTypes (	RpolicyTypes"—

ReplicaSetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
spec (2&.api.extensions.v1beta1.ReplicaSetSpecRspec@
status (2(.api.extensions.v1beta1.ReplicaSetStatusRstatus"»
ReplicaSetCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"è
ReplicaSetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata8
items (2".api.extensions.v1beta1.ReplicaSetRitems"⁄
ReplicaSetSpec
replicas (Rreplicas(
minReadySeconds (RminReadySecondsH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector8
template (2.api.core.v1.PodTemplateSpecRtemplate"Â
ReplicaSetStatus
replicas (Rreplicas2
fullyLabeledReplicas (RfullyLabeledReplicas$
readyReplicas (RreadyReplicas,
availableReplicas (RavailableReplicas0
terminatingReplicas (RterminatingReplicas.
observedGeneration (RobservedGenerationK

conditions (2+.api.extensions.v1beta1.ReplicaSetConditionR
conditions",
RollbackConfig
revision (Rrevision"≤
RollingUpdateDaemonSetQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableE
maxSurge (2).apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"≥
RollingUpdateDeploymentQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailableE
maxSurge (2).apimachinery.pkg.util.intstr.IntOrStringRmaxSurge"¬
ScaleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
spec (2!.api.extensions.v1beta1.ScaleSpecRspec;
status (2#.api.extensions.v1beta1.ScaleStatusRstatus"'
	ScaleSpec
replicas (Rreplicas"›
ScaleStatus
replicas (RreplicasM
selector (21.api.extensions.v1beta1.ScaleStatus.SelectorEntryRselector&
targetSelector (	RtargetSelector;
SelectorEntry
key (	Rkey
value (	Rvalue:8BZk8s.io/api/extensions/v1beta1
Í
"api/flowcontrol/v1/generated.protoapi.flowcontrol.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"à
 ExemptPriorityLevelConfiguration:
nominalConcurrencyShares (RnominalConcurrencyShares(
lendablePercent (RlendablePercent"-
FlowDistinguisherMethod
type (	Rtype"…

FlowSchemaE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".api.flowcontrol.v1.FlowSchemaSpecRspec<
status (2$.api.flowcontrol.v1.FlowSchemaStatusRstatus"»
FlowSchemaCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ã
FlowSchemaListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.flowcontrol.v1.FlowSchemaRitems"€
FlowSchemaSpecw
priorityLevelConfiguration (27.api.flowcontrol.v1.PriorityLevelConfigurationReferenceRpriorityLevelConfiguration.
matchingPrecedence (RmatchingPrecedence]
distinguisherMethod (2+.api.flowcontrol.v1.FlowDistinguisherMethodRdistinguisherMethodA
rules (2+.api.flowcontrol.v1.PolicyRulesWithSubjectsRrules"[
FlowSchemaStatusG

conditions (2'.api.flowcontrol.v1.FlowSchemaConditionR
conditions""
GroupSubject
name (	Rname"g
LimitResponse
type (	RtypeB
queuing (2(.api.flowcontrol.v1.QueuingConfigurationRqueuing"à
!LimitedPriorityLevelConfiguration:
nominalConcurrencyShares (RnominalConcurrencySharesG
limitResponse (2!.api.flowcontrol.v1.LimitResponseRlimitResponse(
lendablePercent (RlendablePercent4
borrowingLimitPercent (RborrowingLimitPercent"W
NonResourcePolicyRule
verbs (	Rverbs(
nonResourceURLs (	RnonResourceURLs"˜
PolicyRulesWithSubjects7
subjects (2.api.flowcontrol.v1.SubjectRsubjectsL
resourceRules (2&.api.flowcontrol.v1.ResourcePolicyRuleRresourceRulesU
nonResourceRules (2).api.flowcontrol.v1.NonResourcePolicyRuleRnonResourceRules"˘
PriorityLevelConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataF
spec (22.api.flowcontrol.v1.PriorityLevelConfigurationSpecRspecL
status (24.api.flowcontrol.v1.PriorityLevelConfigurationStatusRstatus"ÿ
#PriorityLevelConfigurationCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"´
PriorityLevelConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataD
items (2..api.flowcontrol.v1.PriorityLevelConfigurationRitems"9
#PriorityLevelConfigurationReference
name (	Rname"”
PriorityLevelConfigurationSpec
type (	RtypeO
limited (25.api.flowcontrol.v1.LimitedPriorityLevelConfigurationRlimitedL
exempt (24.api.flowcontrol.v1.ExemptPriorityLevelConfigurationRexempt"{
 PriorityLevelConfigurationStatusW

conditions (27.api.flowcontrol.v1.PriorityLevelConfigurationConditionR
conditions"v
QueuingConfiguration
queues (Rqueues
handSize (RhandSize*
queueLengthLimit (RqueueLengthLimit"™
ResourcePolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources"
clusterScope (RclusterScope

namespaces (	R
namespaces"I
ServiceAccountSubject
	namespace (	R	namespace
name (	Rname"›
Subject
kind (	Rkind3
user (2.api.flowcontrol.v1.UserSubjectRuser6
group (2 .api.flowcontrol.v1.GroupSubjectRgroupQ
serviceAccount (2).api.flowcontrol.v1.ServiceAccountSubjectRserviceAccount"!
UserSubject
name (	RnameBZk8s.io/api/flowcontrol/v1
„
'api/flowcontrol/v1beta1/generated.protoapi.flowcontrol.v1beta1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"à
 ExemptPriorityLevelConfiguration:
nominalConcurrencyShares (RnominalConcurrencyShares(
lendablePercent (RlendablePercent"-
FlowDistinguisherMethod
type (	Rtype"”

FlowSchemaE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.flowcontrol.v1beta1.FlowSchemaSpecRspecA
status (2).api.flowcontrol.v1beta1.FlowSchemaStatusRstatus"»
FlowSchemaCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ê
FlowSchemaListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.flowcontrol.v1beta1.FlowSchemaRitems"Í
FlowSchemaSpec|
priorityLevelConfiguration (2<.api.flowcontrol.v1beta1.PriorityLevelConfigurationReferenceRpriorityLevelConfiguration.
matchingPrecedence (RmatchingPrecedenceb
distinguisherMethod (20.api.flowcontrol.v1beta1.FlowDistinguisherMethodRdistinguisherMethodF
rules (20.api.flowcontrol.v1beta1.PolicyRulesWithSubjectsRrules"`
FlowSchemaStatusL

conditions (2,.api.flowcontrol.v1beta1.FlowSchemaConditionR
conditions""
GroupSubject
name (	Rname"l
LimitResponse
type (	RtypeG
queuing (2-.api.flowcontrol.v1beta1.QueuingConfigurationRqueuing"ç
!LimitedPriorityLevelConfiguration:
assuredConcurrencyShares (RassuredConcurrencySharesL
limitResponse (2&.api.flowcontrol.v1beta1.LimitResponseRlimitResponse(
lendablePercent (RlendablePercent4
borrowingLimitPercent (RborrowingLimitPercent"W
NonResourcePolicyRule
verbs (	Rverbs(
nonResourceURLs (	RnonResourceURLs"Ü
PolicyRulesWithSubjects<
subjects (2 .api.flowcontrol.v1beta1.SubjectRsubjectsQ
resourceRules (2+.api.flowcontrol.v1beta1.ResourcePolicyRuleRresourceRulesZ
nonResourceRules (2..api.flowcontrol.v1beta1.NonResourcePolicyRuleRnonResourceRules"É
PriorityLevelConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
spec (27.api.flowcontrol.v1beta1.PriorityLevelConfigurationSpecRspecQ
status (29.api.flowcontrol.v1beta1.PriorityLevelConfigurationStatusRstatus"ÿ
#PriorityLevelConfigurationCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"∞
PriorityLevelConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataI
items (23.api.flowcontrol.v1beta1.PriorityLevelConfigurationRitems"9
#PriorityLevelConfigurationReference
name (	Rname"›
PriorityLevelConfigurationSpec
type (	RtypeT
limited (2:.api.flowcontrol.v1beta1.LimitedPriorityLevelConfigurationRlimitedQ
exempt (29.api.flowcontrol.v1beta1.ExemptPriorityLevelConfigurationRexempt"Ä
 PriorityLevelConfigurationStatus\

conditions (2<.api.flowcontrol.v1beta1.PriorityLevelConfigurationConditionR
conditions"v
QueuingConfiguration
queues (Rqueues
handSize (RhandSize*
queueLengthLimit (RqueueLengthLimit"™
ResourcePolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources"
clusterScope (RclusterScope

namespaces (	R
namespaces"I
ServiceAccountSubject
	namespace (	R	namespace
name (	Rname"Ï
Subject
kind (	Rkind8
user (2$.api.flowcontrol.v1beta1.UserSubjectRuser;
group (2%.api.flowcontrol.v1beta1.GroupSubjectRgroupV
serviceAccount (2..api.flowcontrol.v1beta1.ServiceAccountSubjectRserviceAccount"!
UserSubject
name (	RnameB Zk8s.io/api/flowcontrol/v1beta1
„
'api/flowcontrol/v1beta2/generated.protoapi.flowcontrol.v1beta2-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"à
 ExemptPriorityLevelConfiguration:
nominalConcurrencyShares (RnominalConcurrencyShares(
lendablePercent (RlendablePercent"-
FlowDistinguisherMethod
type (	Rtype"”

FlowSchemaE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.flowcontrol.v1beta2.FlowSchemaSpecRspecA
status (2).api.flowcontrol.v1beta2.FlowSchemaStatusRstatus"»
FlowSchemaCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ê
FlowSchemaListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.flowcontrol.v1beta2.FlowSchemaRitems"Í
FlowSchemaSpec|
priorityLevelConfiguration (2<.api.flowcontrol.v1beta2.PriorityLevelConfigurationReferenceRpriorityLevelConfiguration.
matchingPrecedence (RmatchingPrecedenceb
distinguisherMethod (20.api.flowcontrol.v1beta2.FlowDistinguisherMethodRdistinguisherMethodF
rules (20.api.flowcontrol.v1beta2.PolicyRulesWithSubjectsRrules"`
FlowSchemaStatusL

conditions (2,.api.flowcontrol.v1beta2.FlowSchemaConditionR
conditions""
GroupSubject
name (	Rname"l
LimitResponse
type (	RtypeG
queuing (2-.api.flowcontrol.v1beta2.QueuingConfigurationRqueuing"ç
!LimitedPriorityLevelConfiguration:
assuredConcurrencyShares (RassuredConcurrencySharesL
limitResponse (2&.api.flowcontrol.v1beta2.LimitResponseRlimitResponse(
lendablePercent (RlendablePercent4
borrowingLimitPercent (RborrowingLimitPercent"W
NonResourcePolicyRule
verbs (	Rverbs(
nonResourceURLs (	RnonResourceURLs"Ü
PolicyRulesWithSubjects<
subjects (2 .api.flowcontrol.v1beta2.SubjectRsubjectsQ
resourceRules (2+.api.flowcontrol.v1beta2.ResourcePolicyRuleRresourceRulesZ
nonResourceRules (2..api.flowcontrol.v1beta2.NonResourcePolicyRuleRnonResourceRules"É
PriorityLevelConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
spec (27.api.flowcontrol.v1beta2.PriorityLevelConfigurationSpecRspecQ
status (29.api.flowcontrol.v1beta2.PriorityLevelConfigurationStatusRstatus"ÿ
#PriorityLevelConfigurationCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"∞
PriorityLevelConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataI
items (23.api.flowcontrol.v1beta2.PriorityLevelConfigurationRitems"9
#PriorityLevelConfigurationReference
name (	Rname"›
PriorityLevelConfigurationSpec
type (	RtypeT
limited (2:.api.flowcontrol.v1beta2.LimitedPriorityLevelConfigurationRlimitedQ
exempt (29.api.flowcontrol.v1beta2.ExemptPriorityLevelConfigurationRexempt"Ä
 PriorityLevelConfigurationStatus\

conditions (2<.api.flowcontrol.v1beta2.PriorityLevelConfigurationConditionR
conditions"v
QueuingConfiguration
queues (Rqueues
handSize (RhandSize*
queueLengthLimit (RqueueLengthLimit"™
ResourcePolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources"
clusterScope (RclusterScope

namespaces (	R
namespaces"I
ServiceAccountSubject
	namespace (	R	namespace
name (	Rname"Ï
Subject
kind (	Rkind8
user (2$.api.flowcontrol.v1beta2.UserSubjectRuser;
group (2%.api.flowcontrol.v1beta2.GroupSubjectRgroupV
serviceAccount (2..api.flowcontrol.v1beta2.ServiceAccountSubjectRserviceAccount"!
UserSubject
name (	RnameB Zk8s.io/api/flowcontrol/v1beta2
„
'api/flowcontrol/v1beta3/generated.protoapi.flowcontrol.v1beta3-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"à
 ExemptPriorityLevelConfiguration:
nominalConcurrencyShares (RnominalConcurrencyShares(
lendablePercent (RlendablePercent"-
FlowDistinguisherMethod
type (	Rtype"”

FlowSchemaE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.flowcontrol.v1beta3.FlowSchemaSpecRspecA
status (2).api.flowcontrol.v1beta3.FlowSchemaStatusRstatus"»
FlowSchemaCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"ê
FlowSchemaListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.flowcontrol.v1beta3.FlowSchemaRitems"Í
FlowSchemaSpec|
priorityLevelConfiguration (2<.api.flowcontrol.v1beta3.PriorityLevelConfigurationReferenceRpriorityLevelConfiguration.
matchingPrecedence (RmatchingPrecedenceb
distinguisherMethod (20.api.flowcontrol.v1beta3.FlowDistinguisherMethodRdistinguisherMethodF
rules (20.api.flowcontrol.v1beta3.PolicyRulesWithSubjectsRrules"`
FlowSchemaStatusL

conditions (2,.api.flowcontrol.v1beta3.FlowSchemaConditionR
conditions""
GroupSubject
name (	Rname"l
LimitResponse
type (	RtypeG
queuing (2-.api.flowcontrol.v1beta3.QueuingConfigurationRqueuing"ç
!LimitedPriorityLevelConfiguration:
nominalConcurrencyShares (RnominalConcurrencySharesL
limitResponse (2&.api.flowcontrol.v1beta3.LimitResponseRlimitResponse(
lendablePercent (RlendablePercent4
borrowingLimitPercent (RborrowingLimitPercent"W
NonResourcePolicyRule
verbs (	Rverbs(
nonResourceURLs (	RnonResourceURLs"Ü
PolicyRulesWithSubjects<
subjects (2 .api.flowcontrol.v1beta3.SubjectRsubjectsQ
resourceRules (2+.api.flowcontrol.v1beta3.ResourcePolicyRuleRresourceRulesZ
nonResourceRules (2..api.flowcontrol.v1beta3.NonResourcePolicyRuleRnonResourceRules"É
PriorityLevelConfigurationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataK
spec (27.api.flowcontrol.v1beta3.PriorityLevelConfigurationSpecRspecQ
status (29.api.flowcontrol.v1beta3.PriorityLevelConfigurationStatusRstatus"ÿ
#PriorityLevelConfigurationCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"∞
PriorityLevelConfigurationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataI
items (23.api.flowcontrol.v1beta3.PriorityLevelConfigurationRitems"9
#PriorityLevelConfigurationReference
name (	Rname"›
PriorityLevelConfigurationSpec
type (	RtypeT
limited (2:.api.flowcontrol.v1beta3.LimitedPriorityLevelConfigurationRlimitedQ
exempt (29.api.flowcontrol.v1beta3.ExemptPriorityLevelConfigurationRexempt"Ä
 PriorityLevelConfigurationStatus\

conditions (2<.api.flowcontrol.v1beta3.PriorityLevelConfigurationConditionR
conditions"v
QueuingConfiguration
queues (Rqueues
handSize (RhandSize*
queueLengthLimit (RqueueLengthLimit"™
ResourcePolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources"
clusterScope (RclusterScope

namespaces (	R
namespaces"I
ServiceAccountSubject
	namespace (	R	namespace
name (	Rname"Ï
Subject
kind (	Rkind8
user (2$.api.flowcontrol.v1beta3.UserSubjectRuser;
group (2%.api.flowcontrol.v1beta3.GroupSubjectRgroupV
serviceAccount (2..api.flowcontrol.v1beta3.ServiceAccountSubjectRserviceAccount"!
UserSubject
name (	RnameB Zk8s.io/api/flowcontrol/v1beta3
û
(api/imagepolicy/v1alpha1/generated.protoapi.imagepolicy.v1alpha1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ÿ
ImageReviewE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata=
spec (2).api.imagepolicy.v1alpha1.ImageReviewSpecRspecC
status (2+.api.imagepolicy.v1alpha1.ImageReviewStatusRstatus"0
ImageReviewContainerSpec
image (	Rimage"°
ImageReviewSpecR

containers (22.api.imagepolicy.v1alpha1.ImageReviewContainerSpecR
containers\
annotations (2:.api.imagepolicy.v1alpha1.ImageReviewSpec.AnnotationsEntryRannotations
	namespace (	R	namespace>
AnnotationsEntry
key (	Rkey
value (	Rvalue:8"˘
ImageReviewStatus
allowed (Rallowed
reason (	Rreasonm
auditAnnotations (2A.api.imagepolicy.v1alpha1.ImageReviewStatus.AuditAnnotationsEntryRauditAnnotationsC
AuditAnnotationsEntry
key (	Rkey
value (	Rvalue:8B!Zk8s.io/api/imagepolicy/v1alpha1
«&
!api/networking/v1/generated.protoapi.networking.v1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"~
HTTPIngressPath
path (	Rpath
pathType (	RpathType;
backend (2!.api.networking.v1.IngressBackendRbackend"P
HTTPIngressRuleValue8
paths (2".api.networking.v1.HTTPIngressPathRpaths"à
	IPAddressE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
spec (2 .api.networking.v1.IPAddressSpecRspec"à
IPAddressListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.networking.v1.IPAddressRitems"Q
IPAddressSpec@
	parentRef (2".api.networking.v1.ParentReferenceR	parentRef"5
IPBlock
cidr (	Rcidr
except (	Rexcept"æ
IngressE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata2
spec (2.api.networking.v1.IngressSpecRspec8
status (2 .api.networking.v1.IngressStatusRstatus"ò
IngressBackendB
service (2(.api.networking.v1.IngressServiceBackendRserviceB
resource (2&.api.core.v1.TypedLocalObjectReferenceRresource"é
IngressClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
spec (2#.api.networking.v1.IngressClassSpecRspec"é
IngressClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.networking.v1.IngressClassRitems"ô
IngressClassParametersReference
aPIGroup (	RaPIGroup
kind (	Rkind
name (	Rname
scope (	Rscope
	namespace (	R	namespace"Ü
IngressClassSpec

controller (	R
controllerR

parameters (22.api.networking.v1.IngressClassParametersReferenceR
parameters"Ñ
IngressListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata0
items (2.api.networking.v1.IngressRitems"Ñ
IngressLoadBalancerIngress
ip (	Rip
hostname (	Rhostname:
ports (2$.api.networking.v1.IngressPortStatusRports"d
IngressLoadBalancerStatusG
ingress (2-.api.networking.v1.IngressLoadBalancerIngressRingress"Y
IngressPortStatus
port (Rport
protocol (	Rprotocol
error (	Rerror"r
IngressRule
host (	RhostO
ingressRuleValue (2#.api.networking.v1.IngressRuleValueRingressRuleValue"O
IngressRuleValue;
http (2'.api.networking.v1.HTTPIngressRuleValueRhttp"f
IngressServiceBackend
name (	Rname9
port (2%.api.networking.v1.ServiceBackendPortRport"Î
IngressSpec*
ingressClassName (	RingressClassNameI
defaultBackend (2!.api.networking.v1.IngressBackendRdefaultBackend/
tls (2.api.networking.v1.IngressTLSRtls4
rules (2.api.networking.v1.IngressRuleRrules"a
IngressStatusP
loadBalancer (2,.api.networking.v1.IngressLoadBalancerStatusRloadBalancer"B

IngressTLS
hosts (	Rhosts

secretName (	R
secretName"ê
NetworkPolicyE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata8
spec (2$.api.networking.v1.NetworkPolicySpecRspec"ã
NetworkPolicyEgressRule:
ports (2$.api.networking.v1.NetworkPolicyPortRports4
to (2$.api.networking.v1.NetworkPolicyPeerRto"ê
NetworkPolicyIngressRule:
ports (2$.api.networking.v1.NetworkPolicyPortRports8
from (2$.api.networking.v1.NetworkPolicyPeerRfrom"ê
NetworkPolicyListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata6
items (2 .api.networking.v1.NetworkPolicyRitems"ı
NetworkPolicyPeerN
podSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRpodSelectorZ
namespaceSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnamespaceSelector4
ipBlock (2.api.networking.v1.IPBlockRipBlock"à
NetworkPolicyPort
protocol (	Rprotocol=
port (2).apimachinery.pkg.util.intstr.IntOrStringRport
endPort (RendPort"ê
NetworkPolicySpecN
podSelector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRpodSelectorE
ingress (2+.api.networking.v1.NetworkPolicyIngressRuleRingressB
egress (2*.api.networking.v1.NetworkPolicyEgressRuleRegress 
policyTypes (	RpolicyTypes"u
ParentReference
group (	Rgroup
resource (	Rresource
	namespace (	R	namespace
name (	Rname"@
ServiceBackendPort
name (	Rname
number (Rnumber" 
ServiceCIDRE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".api.networking.v1.ServiceCIDRSpecRspec<
status (2$.api.networking.v1.ServiceCIDRStatusRstatus"å
ServiceCIDRListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.networking.v1.ServiceCIDRRitems"'
ServiceCIDRSpec
cidrs (	Rcidrs"]
ServiceCIDRStatusH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditionsBZk8s.io/api/networking/v1
§
&api/networking/v1beta1/generated.protoapi.networking.v1beta1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"É
HTTPIngressPath
path (	Rpath
pathType (	RpathType@
backend (2&.api.networking.v1beta1.IngressBackendRbackend"U
HTTPIngressRuleValue=
paths (2'.api.networking.v1beta1.HTTPIngressPathRpaths"ç
	IPAddressE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata9
spec (2%.api.networking.v1beta1.IPAddressSpecRspec"ç
IPAddressListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.api.networking.v1beta1.IPAddressRitems"V
IPAddressSpecE
	parentRef (2'.api.networking.v1beta1.ParentReferenceR	parentRef"»
IngressE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
spec (2#.api.networking.v1beta1.IngressSpecRspec=
status (2%.api.networking.v1beta1.IngressStatusRstatus"√
IngressBackend 
serviceName (	RserviceNameK
servicePort (2).apimachinery.pkg.util.intstr.IntOrStringRservicePortB
resource (2&.api.core.v1.TypedLocalObjectReferenceRresource"ì
IngressClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata<
spec (2(.api.networking.v1beta1.IngressClassSpecRspec"ì
IngressClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata:
items (2$.api.networking.v1beta1.IngressClassRitems"ô
IngressClassParametersReference
aPIGroup (	RaPIGroup
kind (	Rkind
name (	Rname
scope (	Rscope
	namespace (	R	namespace"ã
IngressClassSpec

controller (	R
controllerW

parameters (27.api.networking.v1beta1.IngressClassParametersReferenceR
parameters"â
IngressListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.networking.v1beta1.IngressRitems"â
IngressLoadBalancerIngress
ip (	Rip
hostname (	Rhostname?
ports (2).api.networking.v1beta1.IngressPortStatusRports"i
IngressLoadBalancerStatusL
ingress (22.api.networking.v1beta1.IngressLoadBalancerIngressRingress"Y
IngressPortStatus
port (Rport
protocol (	Rprotocol
error (	Rerror"w
IngressRule
host (	RhostT
ingressRuleValue (2(.api.networking.v1beta1.IngressRuleValueRingressRuleValue"T
IngressRuleValue@
http (2,.api.networking.v1beta1.HTTPIngressRuleValueRhttp"Ï
IngressSpec*
ingressClassName (	RingressClassName@
backend (2&.api.networking.v1beta1.IngressBackendRbackend4
tls (2".api.networking.v1beta1.IngressTLSRtls9
rules (2#.api.networking.v1beta1.IngressRuleRrules"f
IngressStatusU
loadBalancer (21.api.networking.v1beta1.IngressLoadBalancerStatusRloadBalancer"B

IngressTLS
hosts (	Rhosts

secretName (	R
secretName"u
ParentReference
group (	Rgroup
resource (	Rresource
	namespace (	R	namespace
name (	Rname"‘
ServiceCIDRE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.networking.v1beta1.ServiceCIDRSpecRspecA
status (2).api.networking.v1beta1.ServiceCIDRStatusRstatus"ë
ServiceCIDRListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.networking.v1beta1.ServiceCIDRRitems"'
ServiceCIDRSpec
cidrs (	Rcidrs"]
ServiceCIDRStatusH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditionsBZk8s.io/api/networking/v1beta1
ç
api/node/v1/generated.protoapi.node.v1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"±
Overhead?
podFixed (2#.api.node.v1.Overhead.PodFixedEntryRpodFixedd
PodFixedEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"€
RuntimeClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
handler (	Rhandler1
overhead (2.api.node.v1.OverheadRoverhead7

scheduling (2.api.node.v1.SchedulingR
scheduling"à
RuntimeClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata/
items (2.api.node.v1.RuntimeClassRitems"◊

SchedulingM
nodeSelector (2).api.node.v1.Scheduling.NodeSelectorEntryRnodeSelector9
tolerations (2.api.core.v1.TolerationRtolerations?
NodeSelectorEntry
key (	Rkey
value (	Rvalue:8BZk8s.io/api/node/v1
ô	
!api/node/v1alpha1/generated.protoapi.node.v1alpha1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"∑
OverheadE
podFixed (2).api.node.v1alpha1.Overhead.PodFixedEntryRpodFixedd
PodFixedEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"é
RuntimeClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata7
spec (2#.api.node.v1alpha1.RuntimeClassSpecRspec"é
RuntimeClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.node.v1alpha1.RuntimeClassRitems"≤
RuntimeClassSpec&
runtimeHandler (	RruntimeHandler7
overhead (2.api.node.v1alpha1.OverheadRoverhead=

scheduling (2.api.node.v1alpha1.SchedulingR
scheduling"›

SchedulingS
nodeSelector (2/.api.node.v1alpha1.Scheduling.NodeSelectorEntryRnodeSelector9
tolerations (2.api.core.v1.TolerationRtolerations?
NodeSelectorEntry
key (	Rkey
value (	Rvalue:8BZk8s.io/api/node/v1alpha1
µ
 api/node/v1beta1/generated.protoapi.node.v1beta1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"∂
OverheadD
podFixed (2(.api.node.v1beta1.Overhead.PodFixedEntryRpodFixedd
PodFixedEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"Â
RuntimeClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
handler (	Rhandler6
overhead (2.api.node.v1beta1.OverheadRoverhead<

scheduling (2.api.node.v1beta1.SchedulingR
scheduling"ç
RuntimeClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.node.v1beta1.RuntimeClassRitems"‹

SchedulingR
nodeSelector (2..api.node.v1beta1.Scheduling.NodeSelectorEntryRnodeSelector9
tolerations (2.api.core.v1.TolerationRtolerations?
NodeSelectorEntry
key (	Rkey
value (	Rvalue:8BZk8s.io/api/node/v1beta1
Ï
api/policy/v1/generated.protoapi.policy.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"•
EvictionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataR
deleteOptions (2,.apimachinery.pkg.apis.meta.v1.DeleteOptionsRdeleteOptions"⁄
PodDisruptionBudgetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata:
spec (2&.api.policy.v1.PodDisruptionBudgetSpecRspec@
status (2(.api.policy.v1.PodDisruptionBudgetStatusRstatus"ò
PodDisruptionBudgetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata8
items (2".api.policy.v1.PodDisruptionBudgetRitems"≈
PodDisruptionBudgetSpecM
minAvailable (2).apimachinery.pkg.util.intstr.IntOrStringRminAvailableH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailable>
unhealthyPodEvictionPolicy (	RunhealthyPodEvictionPolicy"É
PodDisruptionBudgetStatus.
observedGeneration (RobservedGenerationa
disruptedPods (2;.api.policy.v1.PodDisruptionBudgetStatus.DisruptedPodsEntryRdisruptedPods.
disruptionsAllowed (RdisruptionsAllowed&
currentHealthy (RcurrentHealthy&
desiredHealthy (RdesiredHealthy"
expectedPods (RexpectedPodsH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditionse
DisruptedPodsEntry
key (	Rkey9
value (2#.apimachinery.pkg.apis.meta.v1.TimeRvalue:8BZk8s.io/api/policy/v1
è
"api/policy/v1beta1/generated.protoapi.policy.v1beta1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto,apimachinery/pkg/util/intstr/generated.proto"•
EvictionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataR
deleteOptions (2,.apimachinery.pkg.apis.meta.v1.DeleteOptionsRdeleteOptions"‰
PodDisruptionBudgetE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata?
spec (2+.api.policy.v1beta1.PodDisruptionBudgetSpecRspecE
status (2-.api.policy.v1beta1.PodDisruptionBudgetStatusRstatus"ù
PodDisruptionBudgetListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata=
items (2'.api.policy.v1beta1.PodDisruptionBudgetRitems"≈
PodDisruptionBudgetSpecM
minAvailable (2).apimachinery.pkg.util.intstr.IntOrStringRminAvailableH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselectorQ
maxUnavailable (2).apimachinery.pkg.util.intstr.IntOrStringRmaxUnavailable>
unhealthyPodEvictionPolicy (	RunhealthyPodEvictionPolicy"à
PodDisruptionBudgetStatus.
observedGeneration (RobservedGenerationf
disruptedPods (2@.api.policy.v1beta1.PodDisruptionBudgetStatus.DisruptedPodsEntryRdisruptedPods.
disruptionsAllowed (RdisruptionsAllowed&
currentHealthy (RcurrentHealthy&
desiredHealthy (RdesiredHealthy"
expectedPods (RexpectedPodsH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditionse
DisruptedPodsEntry
key (	Rkey9
value (2#.apimachinery.pkg.apis.meta.v1.TimeRvalue:8BZk8s.io/api/policy/v1beta1
î
api/rbac/v1/generated.protoapi.rbac.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"s
AggregationRule`
clusterRoleSelectors (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRclusterRoleSelectors"À
ClusterRoleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata-
rules (2.api.rbac.v1.PolicyRuleRrulesF
aggregationRule (2.api.rbac.v1.AggregationRuleRaggregationRule"Ω
ClusterRoleBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata0
subjects (2.api.rbac.v1.SubjectRsubjects.
roleRef (2.api.rbac.v1.RoleRefRroleRef"î
ClusterRoleBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata5
items (2.api.rbac.v1.ClusterRoleBindingRitems"Ü
ClusterRoleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata.
items (2.api.rbac.v1.ClusterRoleRitems"Æ

PolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources$
resourceNames (	RresourceNames(
nonResourceURLs (	RnonResourceURLs"|
RoleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata-
rules (2.api.rbac.v1.PolicyRuleRrules"∂
RoleBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata0
subjects (2.api.rbac.v1.SubjectRsubjects.
roleRef (2.api.rbac.v1.RoleRefRroleRef"Ü
RoleBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata.
items (2.api.rbac.v1.RoleBindingRitems"x
RoleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata'
items (2.api.rbac.v1.RoleRitems"M
RoleRef
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"k
Subject
kind (	Rkind
apiGroup (	RapiGroup
name (	Rname
	namespace (	R	namespaceBZk8s.io/api/rbac/v1
Ì
!api/rbac/v1alpha1/generated.protoapi.rbac.v1alpha1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"s
AggregationRule`
clusterRoleSelectors (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRclusterRoleSelectors"◊
ClusterRoleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata3
rules (2.api.rbac.v1alpha1.PolicyRuleRrulesL
aggregationRule (2".api.rbac.v1alpha1.AggregationRuleRaggregationRule"…
ClusterRoleBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
subjects (2.api.rbac.v1alpha1.SubjectRsubjects4
roleRef (2.api.rbac.v1alpha1.RoleRefRroleRef"ö
ClusterRoleBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata;
items (2%.api.rbac.v1alpha1.ClusterRoleBindingRitems"å
ClusterRoleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.rbac.v1alpha1.ClusterRoleRitems"Æ

PolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources$
resourceNames (	RresourceNames(
nonResourceURLs (	RnonResourceURLs"Ç
RoleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata3
rules (2.api.rbac.v1alpha1.PolicyRuleRrules"¬
RoleBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
subjects (2.api.rbac.v1alpha1.SubjectRsubjects4
roleRef (2.api.rbac.v1alpha1.RoleRefRroleRef"å
RoleBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.rbac.v1alpha1.RoleBindingRitems"~
RoleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata-
items (2.api.rbac.v1alpha1.RoleRitems"M
RoleRef
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"o
Subject
kind (	Rkind

apiVersion (	R
apiVersion
name (	Rname
	namespace (	R	namespaceBZk8s.io/api/rbac/v1alpha1
€
 api/rbac/v1beta1/generated.protoapi.rbac.v1beta1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"s
AggregationRule`
clusterRoleSelectors (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRclusterRoleSelectors"’
ClusterRoleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata2
rules (2.api.rbac.v1beta1.PolicyRuleRrulesK
aggregationRule (2!.api.rbac.v1beta1.AggregationRuleRaggregationRule"«
ClusterRoleBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
subjects (2.api.rbac.v1beta1.SubjectRsubjects3
roleRef (2.api.rbac.v1beta1.RoleRefRroleRef"ô
ClusterRoleBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata:
items (2$.api.rbac.v1beta1.ClusterRoleBindingRitems"ã
ClusterRoleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.api.rbac.v1beta1.ClusterRoleRitems"Æ

PolicyRule
verbs (	Rverbs
	apiGroups (	R	apiGroups
	resources (	R	resources$
resourceNames (	RresourceNames(
nonResourceURLs (	RnonResourceURLs"Å
RoleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata2
rules (2.api.rbac.v1beta1.PolicyRuleRrules"¿
RoleBindingE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata5
subjects (2.api.rbac.v1beta1.SubjectRsubjects3
roleRef (2.api.rbac.v1beta1.RoleRefRroleRef"ã
RoleBindingListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata3
items (2.api.rbac.v1beta1.RoleBindingRitems"}
RoleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata,
items (2.api.rbac.v1beta1.RoleRitems"M
RoleRef
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"k
Subject
kind (	Rkind
apiGroup (	RapiGroup
name (	Rname
	namespace (	R	namespaceBZk8s.io/api/rbac/v1beta1
íE
api/resource/v1/generated.protoapi.resource.v1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"¡
AllocatedDeviceStatus
driver (	Rdriver
pool (	Rpool
device (	Rdevice
shareID (	RshareIDH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions:
data (2&.apimachinery.pkg.runtime.RawExtensionRdataD
networkData (2".api.resource.v1.NetworkDeviceDataRnetworkData"Î
AllocationResultA
devices (2'.api.resource.v1.DeviceAllocationResultRdevices=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelectorU
allocationTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRallocationTimestamp"3
CELDeviceSelector

expression (	R
expression"Ú
CapacityRequestPolicyA
default (2'.apimachinery.pkg.api.resource.QuantityRdefaultI
validValues (2'.apimachinery.pkg.api.resource.QuantityRvalidValuesK

validRange (2+.api.resource.v1.CapacityRequestPolicyRangeR
validRange"œ
CapacityRequestPolicyRange9
min (2'.apimachinery.pkg.api.resource.QuantityRmin9
max (2'.apimachinery.pkg.api.resource.QuantityRmax;
step (2'.apimachinery.pkg.api.resource.QuantityRstep"Õ
CapacityRequirementsO
requests (23.api.resource.v1.CapacityRequirements.RequestsEntryRrequestsd
RequestsEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"H
Counter=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue"æ

CounterSet
name (	RnameE
counters (2).api.resource.v1.CounterSet.CountersEntryRcountersU
CountersEntry
key (	Rkey.
value (2.api.resource.v1.CounterRvalue:8"≥
Device
name (	RnameG

attributes (2'.api.resource.v1.Device.AttributesEntryR
attributesA
capacity (2%.api.resource.v1.Device.CapacityEntryRcapacityU
consumesCounters (2).api.resource.v1.DeviceCounterConsumptionRconsumesCounters
nodeName (	RnodeName=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes4
taints (2.api.resource.v1.DeviceTaintRtaints 
bindsToNode	 (RbindsToNode,
bindingConditions
 (	RbindingConditions:
bindingFailureConditions (	RbindingFailureConditions:
allowMultipleAllocations (RallowMultipleAllocations_
AttributesEntry
key (	Rkey6
value (2 .api.resource.v1.DeviceAttributeRvalue:8\
CapacityEntry
key (	Rkey5
value (2.api.resource.v1.DeviceCapacityRvalue:8"´
DeviceAllocationConfiguration
source (	Rsource
requests (	RrequestsV
deviceConfiguration (2$.api.resource.v1.DeviceConfigurationRdeviceConfiguration"™
DeviceAllocationResultH
results (2..api.resource.v1.DeviceRequestAllocationResultRresultsF
config (2..api.resource.v1.DeviceAllocationConfigurationRconfig"i
DeviceAttribute
int (Rint
bool (Rbool
string (	Rstring
version (	Rversion"ù
DeviceCapacity=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueL
requestPolicy (2&.api.resource.v1.CapacityRequestPolicyRrequestPolicy"—
DeviceClaim:
requests (2.api.resource.v1.DeviceRequestRrequestsC
constraints (2!.api.resource.v1.DeviceConstraintRconstraintsA
config (2).api.resource.v1.DeviceClaimConfigurationRconfig"é
DeviceClaimConfiguration
requests (	RrequestsV
deviceConfiguration (2$.api.resource.v1.DeviceConfigurationRdeviceConfiguration"ä
DeviceClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
spec (2 .api.resource.v1.DeviceClassSpecRspec"r
DeviceClassConfigurationV
deviceConfiguration (2$.api.resource.v1.DeviceConfigurationRdeviceConfiguration"ä
DeviceClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.resource.v1.DeviceClassRitems"«
DeviceClassSpec=
	selectors (2.api.resource.v1.DeviceSelectorR	selectorsA
config (2).api.resource.v1.DeviceClassConfigurationRconfig2
extendedResourceName (	RextendedResourceName"Y
DeviceConfigurationB
opaque (2*.api.resource.v1.OpaqueDeviceConfigurationRopaque"Ñ
DeviceConstraint
requests (	Rrequests&
matchAttribute (	RmatchAttribute,
distinctAttribute (	RdistinctAttribute"Ê
DeviceCounterConsumption

counterSet (	R
counterSetS
counters (27.api.resource.v1.DeviceCounterConsumption.CountersEntryRcountersU
CountersEntry
key (	Rkey.
value (2.api.resource.v1.CounterRvalue:8"≠
DeviceRequest
name (	Rname=
exactly (2#.api.resource.v1.ExactDeviceRequestRexactlyI
firstAvailable (2!.api.resource.v1.DeviceSubRequestRfirstAvailable"»
DeviceRequestAllocationResult
request (	Rrequest
driver (	Rdriver
pool (	Rpool
device (	Rdevice 
adminAccess (RadminAccessC
tolerations (2!.api.resource.v1.DeviceTolerationRtolerations,
bindingConditions (	RbindingConditions:
bindingFailureConditions (	RbindingFailureConditions
shareID	 (	RshareIDp
consumedCapacity
 (2D.api.resource.v1.DeviceRequestAllocationResult.ConsumedCapacityEntryRconsumedCapacityl
ConsumedCapacityEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"F
DeviceSelector4
cel (2".api.resource.v1.CELDeviceSelectorRcel"’
DeviceSubRequest
name (	Rname(
deviceClassName (	RdeviceClassName=
	selectors (2.api.resource.v1.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (RcountC
tolerations (2!.api.resource.v1.DeviceTolerationRtolerationsA
capacity (2%.api.resource.v1.CapacityRequirementsRcapacity"ê
DeviceTaint
key (	Rkey
value (	Rvalue
effect (	ReffectA
	timeAdded (2#.apimachinery.pkg.apis.meta.v1.TimeR	timeAdded"ú
DeviceToleration
key (	Rkey
operator (	Roperator
value (	Rvalue
effect (	Reffect,
tolerationSeconds (RtolerationSeconds"Â
ExactDeviceRequest(
deviceClassName (	RdeviceClassName=
	selectors (2.api.resource.v1.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (Rcount 
adminAccess (RadminAccessC
tolerations (2!.api.resource.v1.DeviceTolerationRtolerationsA
capacity (2%.api.resource.v1.CapacityRequirementsRcapacity"u
NetworkDeviceData$
interfaceName (	RinterfaceName
ips (	Rips(
hardwareAddress (	RhardwareAddress"{
OpaqueDeviceConfiguration
driver (	RdriverF

parameters (2&.apimachinery.pkg.runtime.RawExtensionR
parameters"Ã
ResourceClaimE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".api.resource.v1.ResourceClaimSpecRspec<
status (2$.api.resource.v1.ResourceClaimStatusRstatus"~
ResourceClaimConsumerReference
apiGroup (	RapiGroup
resource (	Rresource
name (	Rname
uid (	Ruid"é
ResourceClaimListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.resource.v1.ResourceClaimRitems"K
ResourceClaimSpec6
devices (2.api.resource.v1.DeviceClaimRdevices"Ì
ResourceClaimStatusA

allocation (2!.api.resource.v1.AllocationResultR
allocationQ
reservedFor (2/.api.resource.v1.ResourceClaimConsumerReferenceRreservedFor@
devices (2&.api.resource.v1.AllocatedDeviceStatusRdevices"û
ResourceClaimTemplateE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata>
spec (2*.api.resource.v1.ResourceClaimTemplateSpecRspec"û
ResourceClaimTemplateListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.api.resource.v1.ResourceClaimTemplateRitems"ö
ResourceClaimTemplateSpecE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".api.resource.v1.ResourceClaimSpecRspec"r
ResourcePool
name (	Rname

generation (R
generation.
resourceSliceCount (RresourceSliceCount"é
ResourceSliceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".api.resource.v1.ResourceSliceSpecRspec"é
ResourceSliceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.resource.v1.ResourceSliceRitems"Ö
ResourceSliceSpec
driver (	Rdriver1
pool (2.api.resource.v1.ResourcePoolRpool
nodeName (	RnodeName=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes1
devices (2.api.resource.v1.DeviceRdevices6
perDeviceNodeSelection (RperDeviceNodeSelectionC
sharedCounters (2.api.resource.v1.CounterSetRsharedCountersBZk8s.io/api/resource/v1
ﬁ	
%api/resource/v1alpha3/generated.protoapi.resource.v1alpha3-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"3
CELDeviceSelector

expression (	R
expression"L
DeviceSelector:
cel (2(.api.resource.v1alpha3.CELDeviceSelectorRcel"ê
DeviceTaint
key (	Rkey
value (	Rvalue
effect (	ReffectA
	timeAdded (2#.apimachinery.pkg.apis.meta.v1.TimeR	timeAdded"ﬁ
DeviceTaintRuleE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata>
spec (2*.api.resource.v1alpha3.DeviceTaintRuleSpecRspecD
status (2,.api.resource.v1alpha3.DeviceTaintRuleStatusRstatus"ò
DeviceTaintRuleListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.api.resource.v1alpha3.DeviceTaintRuleRitems"£
DeviceTaintRuleSpecR
deviceSelector (2*.api.resource.v1alpha3.DeviceTaintSelectorRdeviceSelector8
taint (2".api.resource.v1alpha3.DeviceTaintRtaint"a
DeviceTaintRuleStatusH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions"Y
DeviceTaintSelector
driver (	Rdriver
pool (	Rpool
device (	RdeviceBZk8s.io/api/resource/v1alpha3
¶G
$api/resource/v1beta1/generated.protoapi.resource.v1beta1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"∆
AllocatedDeviceStatus
driver (	Rdriver
pool (	Rpool
device (	Rdevice
shareID (	RshareIDH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions:
data (2&.apimachinery.pkg.runtime.RawExtensionRdataI
networkData (2'.api.resource.v1beta1.NetworkDeviceDataRnetworkData"
AllocationResultF
devices (2,.api.resource.v1beta1.DeviceAllocationResultRdevices=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelectorU
allocationTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRallocationTimestamp"Ã
BasicDeviceQ

attributes (21.api.resource.v1beta1.BasicDevice.AttributesEntryR
attributesK
capacity (2/.api.resource.v1beta1.BasicDevice.CapacityEntryRcapacityZ
consumesCounters (2..api.resource.v1beta1.DeviceCounterConsumptionRconsumesCounters
nodeName (	RnodeName=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes9
taints (2!.api.resource.v1beta1.DeviceTaintRtaints 
bindsToNode (RbindsToNode,
bindingConditions	 (	RbindingConditions:
bindingFailureConditions
 (	RbindingFailureConditions:
allowMultipleAllocations (RallowMultipleAllocationsd
AttributesEntry
key (	Rkey;
value (2%.api.resource.v1beta1.DeviceAttributeRvalue:8a
CapacityEntry
key (	Rkey:
value (2$.api.resource.v1beta1.DeviceCapacityRvalue:8"3
CELDeviceSelector

expression (	R
expression"˜
CapacityRequestPolicyA
default (2'.apimachinery.pkg.api.resource.QuantityRdefaultI
validValues (2'.apimachinery.pkg.api.resource.QuantityRvalidValuesP

validRange (20.api.resource.v1beta1.CapacityRequestPolicyRangeR
validRange"œ
CapacityRequestPolicyRange9
min (2'.apimachinery.pkg.api.resource.QuantityRmin9
max (2'.apimachinery.pkg.api.resource.QuantityRmax;
step (2'.apimachinery.pkg.api.resource.QuantityRstep"“
CapacityRequirementsT
requests (28.api.resource.v1beta1.CapacityRequirements.RequestsEntryRrequestsd
RequestsEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"H
Counter=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue"»

CounterSet
name (	RnameJ
counters (2..api.resource.v1beta1.CounterSet.CountersEntryRcountersZ
CountersEntry
key (	Rkey3
value (2.api.resource.v1beta1.CounterRvalue:8"U
Device
name (	Rname7
basic (2!.api.resource.v1beta1.BasicDeviceRbasic"∞
DeviceAllocationConfiguration
source (	Rsource
requests (	Rrequests[
deviceConfiguration (2).api.resource.v1beta1.DeviceConfigurationRdeviceConfiguration"¥
DeviceAllocationResultM
results (23.api.resource.v1beta1.DeviceRequestAllocationResultRresultsK
config (23.api.resource.v1beta1.DeviceAllocationConfigurationRconfig"i
DeviceAttribute
int (Rint
bool (Rbool
string (	Rstring
version (	Rversion"¢
DeviceCapacity=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueQ
requestPolicy (2+.api.resource.v1beta1.CapacityRequestPolicyRrequestPolicy"‡
DeviceClaim?
requests (2#.api.resource.v1beta1.DeviceRequestRrequestsH
constraints (2&.api.resource.v1beta1.DeviceConstraintRconstraintsF
config (2..api.resource.v1beta1.DeviceClaimConfigurationRconfig"ì
DeviceClaimConfiguration
requests (	Rrequests[
deviceConfiguration (2).api.resource.v1beta1.DeviceConfigurationRdeviceConfiguration"è
DeviceClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata9
spec (2%.api.resource.v1beta1.DeviceClassSpecRspec"w
DeviceClassConfiguration[
deviceConfiguration (2).api.resource.v1beta1.DeviceConfigurationRdeviceConfiguration"è
DeviceClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.api.resource.v1beta1.DeviceClassRitems"—
DeviceClassSpecB
	selectors (2$.api.resource.v1beta1.DeviceSelectorR	selectorsF
config (2..api.resource.v1beta1.DeviceClassConfigurationRconfig2
extendedResourceName (	RextendedResourceName"^
DeviceConfigurationG
opaque (2/.api.resource.v1beta1.OpaqueDeviceConfigurationRopaque"Ñ
DeviceConstraint
requests (	Rrequests&
matchAttribute (	RmatchAttribute,
distinctAttribute (	RdistinctAttribute"
DeviceCounterConsumption

counterSet (	R
counterSetX
counters (2<.api.resource.v1beta1.DeviceCounterConsumption.CountersEntryRcountersZ
CountersEntry
key (	Rkey3
value (2.api.resource.v1beta1.CounterRvalue:8"”
DeviceRequest
name (	Rname(
deviceClassName (	RdeviceClassNameB
	selectors (2$.api.resource.v1beta1.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (Rcount 
adminAccess (RadminAccessN
firstAvailable (2&.api.resource.v1beta1.DeviceSubRequestRfirstAvailableH
tolerations (2&.api.resource.v1beta1.DeviceTolerationRtolerationsF
capacity	 (2*.api.resource.v1beta1.CapacityRequirementsRcapacity"“
DeviceRequestAllocationResult
request (	Rrequest
driver (	Rdriver
pool (	Rpool
device (	Rdevice 
adminAccess (RadminAccessH
tolerations (2&.api.resource.v1beta1.DeviceTolerationRtolerations,
bindingConditions (	RbindingConditions:
bindingFailureConditions (	RbindingFailureConditions
shareID	 (	RshareIDu
consumedCapacity
 (2I.api.resource.v1beta1.DeviceRequestAllocationResult.ConsumedCapacityEntryRconsumedCapacityl
ConsumedCapacityEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"K
DeviceSelector9
cel (2'.api.resource.v1beta1.CELDeviceSelectorRcel"‰
DeviceSubRequest
name (	Rname(
deviceClassName (	RdeviceClassNameB
	selectors (2$.api.resource.v1beta1.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (RcountH
tolerations (2&.api.resource.v1beta1.DeviceTolerationRtolerationsF
capacity (2*.api.resource.v1beta1.CapacityRequirementsRcapacity"ê
DeviceTaint
key (	Rkey
value (	Rvalue
effect (	ReffectA
	timeAdded (2#.apimachinery.pkg.apis.meta.v1.TimeR	timeAdded"ú
DeviceToleration
key (	Rkey
operator (	Roperator
value (	Rvalue
effect (	Reffect,
tolerationSeconds (RtolerationSeconds"u
NetworkDeviceData$
interfaceName (	RinterfaceName
ips (	Rips(
hardwareAddress (	RhardwareAddress"{
OpaqueDeviceConfiguration
driver (	RdriverF

parameters (2&.apimachinery.pkg.runtime.RawExtensionR
parameters"÷
ResourceClaimE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.resource.v1beta1.ResourceClaimSpecRspecA
status (2).api.resource.v1beta1.ResourceClaimStatusRstatus"~
ResourceClaimConsumerReference
apiGroup (	RapiGroup
resource (	Rresource
name (	Rname
uid (	Ruid"ì
ResourceClaimListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.resource.v1beta1.ResourceClaimRitems"P
ResourceClaimSpec;
devices (2!.api.resource.v1beta1.DeviceClaimRdevices"¸
ResourceClaimStatusF

allocation (2&.api.resource.v1beta1.AllocationResultR
allocationV
reservedFor (24.api.resource.v1beta1.ResourceClaimConsumerReferenceRreservedForE
devices (2+.api.resource.v1beta1.AllocatedDeviceStatusRdevices"£
ResourceClaimTemplateE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataC
spec (2/.api.resource.v1beta1.ResourceClaimTemplateSpecRspec"£
ResourceClaimTemplateListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataA
items (2+.api.resource.v1beta1.ResourceClaimTemplateRitems"ü
ResourceClaimTemplateSpecE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.resource.v1beta1.ResourceClaimSpecRspec"r
ResourcePool
name (	Rname

generation (R
generation.
resourceSliceCount (RresourceSliceCount"ì
ResourceSliceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.resource.v1beta1.ResourceSliceSpecRspec"ì
ResourceSliceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.resource.v1beta1.ResourceSliceRitems"î
ResourceSliceSpec
driver (	Rdriver6
pool (2".api.resource.v1beta1.ResourcePoolRpool
nodeName (	RnodeName=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes6
devices (2.api.resource.v1beta1.DeviceRdevices6
perDeviceNodeSelection (RperDeviceNodeSelectionH
sharedCounters (2 .api.resource.v1beta1.CounterSetRsharedCountersBZk8s.io/api/resource/v1beta1
ØG
$api/resource/v1beta2/generated.protoapi.resource.v1beta2api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"∆
AllocatedDeviceStatus
driver (	Rdriver
pool (	Rpool
device (	Rdevice
shareID (	RshareIDH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions:
data (2&.apimachinery.pkg.runtime.RawExtensionRdataI
networkData (2'.api.resource.v1beta2.NetworkDeviceDataRnetworkData"
AllocationResultF
devices (2,.api.resource.v1beta2.DeviceAllocationResultRdevices=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelectorU
allocationTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRallocationTimestamp"3
CELDeviceSelector

expression (	R
expression"˜
CapacityRequestPolicyA
default (2'.apimachinery.pkg.api.resource.QuantityRdefaultI
validValues (2'.apimachinery.pkg.api.resource.QuantityRvalidValuesP

validRange (20.api.resource.v1beta2.CapacityRequestPolicyRangeR
validRange"œ
CapacityRequestPolicyRange9
min (2'.apimachinery.pkg.api.resource.QuantityRmin9
max (2'.apimachinery.pkg.api.resource.QuantityRmax;
step (2'.apimachinery.pkg.api.resource.QuantityRstep"“
CapacityRequirementsT
requests (28.api.resource.v1beta2.CapacityRequirements.RequestsEntryRrequestsd
RequestsEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"H
Counter=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue"»

CounterSet
name (	RnameJ
counters (2..api.resource.v1beta2.CounterSet.CountersEntryRcountersZ
CountersEntry
key (	Rkey3
value (2.api.resource.v1beta2.CounterRvalue:8"—
Device
name (	RnameL

attributes (2,.api.resource.v1beta2.Device.AttributesEntryR
attributesF
capacity (2*.api.resource.v1beta2.Device.CapacityEntryRcapacityZ
consumesCounters (2..api.resource.v1beta2.DeviceCounterConsumptionRconsumesCounters
nodeName (	RnodeName=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes9
taints (2!.api.resource.v1beta2.DeviceTaintRtaints 
bindsToNode	 (RbindsToNode,
bindingConditions
 (	RbindingConditions:
bindingFailureConditions (	RbindingFailureConditions:
allowMultipleAllocations (RallowMultipleAllocationsd
AttributesEntry
key (	Rkey;
value (2%.api.resource.v1beta2.DeviceAttributeRvalue:8a
CapacityEntry
key (	Rkey:
value (2$.api.resource.v1beta2.DeviceCapacityRvalue:8"∞
DeviceAllocationConfiguration
source (	Rsource
requests (	Rrequests[
deviceConfiguration (2).api.resource.v1beta2.DeviceConfigurationRdeviceConfiguration"¥
DeviceAllocationResultM
results (23.api.resource.v1beta2.DeviceRequestAllocationResultRresultsK
config (23.api.resource.v1beta2.DeviceAllocationConfigurationRconfig"i
DeviceAttribute
int (Rint
bool (Rbool
string (	Rstring
version (	Rversion"¢
DeviceCapacity=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueQ
requestPolicy (2+.api.resource.v1beta2.CapacityRequestPolicyRrequestPolicy"‡
DeviceClaim?
requests (2#.api.resource.v1beta2.DeviceRequestRrequestsH
constraints (2&.api.resource.v1beta2.DeviceConstraintRconstraintsF
config (2..api.resource.v1beta2.DeviceClaimConfigurationRconfig"ì
DeviceClaimConfiguration
requests (	Rrequests[
deviceConfiguration (2).api.resource.v1beta2.DeviceConfigurationRdeviceConfiguration"è
DeviceClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata9
spec (2%.api.resource.v1beta2.DeviceClassSpecRspec"w
DeviceClassConfiguration[
deviceConfiguration (2).api.resource.v1beta2.DeviceConfigurationRdeviceConfiguration"è
DeviceClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.api.resource.v1beta2.DeviceClassRitems"—
DeviceClassSpecB
	selectors (2$.api.resource.v1beta2.DeviceSelectorR	selectorsF
config (2..api.resource.v1beta2.DeviceClassConfigurationRconfig2
extendedResourceName (	RextendedResourceName"^
DeviceConfigurationG
opaque (2/.api.resource.v1beta2.OpaqueDeviceConfigurationRopaque"Ñ
DeviceConstraint
requests (	Rrequests&
matchAttribute (	RmatchAttribute,
distinctAttribute (	RdistinctAttribute"
DeviceCounterConsumption

counterSet (	R
counterSetX
counters (2<.api.resource.v1beta2.DeviceCounterConsumption.CountersEntryRcountersZ
CountersEntry
key (	Rkey3
value (2.api.resource.v1beta2.CounterRvalue:8"∑
DeviceRequest
name (	RnameB
exactly (2(.api.resource.v1beta2.ExactDeviceRequestRexactlyN
firstAvailable (2&.api.resource.v1beta2.DeviceSubRequestRfirstAvailable"“
DeviceRequestAllocationResult
request (	Rrequest
driver (	Rdriver
pool (	Rpool
device (	Rdevice 
adminAccess (RadminAccessH
tolerations (2&.api.resource.v1beta2.DeviceTolerationRtolerations,
bindingConditions (	RbindingConditions:
bindingFailureConditions (	RbindingFailureConditions
shareID	 (	RshareIDu
consumedCapacity
 (2I.api.resource.v1beta2.DeviceRequestAllocationResult.ConsumedCapacityEntryRconsumedCapacityl
ConsumedCapacityEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"K
DeviceSelector9
cel (2'.api.resource.v1beta2.CELDeviceSelectorRcel"‰
DeviceSubRequest
name (	Rname(
deviceClassName (	RdeviceClassNameB
	selectors (2$.api.resource.v1beta2.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (RcountH
tolerations (2&.api.resource.v1beta2.DeviceTolerationRtolerationsF
capacity (2*.api.resource.v1beta2.CapacityRequirementsRcapacity"ê
DeviceTaint
key (	Rkey
value (	Rvalue
effect (	ReffectA
	timeAdded (2#.apimachinery.pkg.apis.meta.v1.TimeR	timeAdded"ú
DeviceToleration
key (	Rkey
operator (	Roperator
value (	Rvalue
effect (	Reffect,
tolerationSeconds (RtolerationSeconds"Ù
ExactDeviceRequest(
deviceClassName (	RdeviceClassNameB
	selectors (2$.api.resource.v1beta2.DeviceSelectorR	selectors&
allocationMode (	RallocationMode
count (Rcount 
adminAccess (RadminAccessH
tolerations (2&.api.resource.v1beta2.DeviceTolerationRtolerationsF
capacity (2*.api.resource.v1beta2.CapacityRequirementsRcapacity"u
NetworkDeviceData$
interfaceName (	RinterfaceName
ips (	Rips(
hardwareAddress (	RhardwareAddress"{
OpaqueDeviceConfiguration
driver (	RdriverF

parameters (2&.apimachinery.pkg.runtime.RawExtensionR
parameters"÷
ResourceClaimE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.resource.v1beta2.ResourceClaimSpecRspecA
status (2).api.resource.v1beta2.ResourceClaimStatusRstatus"~
ResourceClaimConsumerReference
apiGroup (	RapiGroup
resource (	Rresource
name (	Rname
uid (	Ruid"ì
ResourceClaimListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.resource.v1beta2.ResourceClaimRitems"P
ResourceClaimSpec;
devices (2!.api.resource.v1beta2.DeviceClaimRdevices"¸
ResourceClaimStatusF

allocation (2&.api.resource.v1beta2.AllocationResultR
allocationV
reservedFor (24.api.resource.v1beta2.ResourceClaimConsumerReferenceRreservedForE
devices (2+.api.resource.v1beta2.AllocatedDeviceStatusRdevices"£
ResourceClaimTemplateE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataC
spec (2/.api.resource.v1beta2.ResourceClaimTemplateSpecRspec"£
ResourceClaimTemplateListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataA
items (2+.api.resource.v1beta2.ResourceClaimTemplateRitems"ü
ResourceClaimTemplateSpecE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.resource.v1beta2.ResourceClaimSpecRspec"r
ResourcePool
name (	Rname

generation (R
generation.
resourceSliceCount (RresourceSliceCount"ì
ResourceSliceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata;
spec (2'.api.resource.v1beta2.ResourceSliceSpecRspec"ì
ResourceSliceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata9
items (2#.api.resource.v1beta2.ResourceSliceRitems"î
ResourceSliceSpec
driver (	Rdriver6
pool (2".api.resource.v1beta2.ResourcePoolRpool
nodeName (	RnodeName=
nodeSelector (2.api.core.v1.NodeSelectorRnodeSelector
allNodes (RallNodes6
devices (2.api.resource.v1beta2.DeviceRdevices6
perDeviceNodeSelection (RperDeviceNodeSelectionH
sharedCounters (2 .api.resource.v1beta2.CounterSetRsharedCountersBZk8s.io/api/resource/v1beta2
Ô
!api/scheduling/v1/generated.protoapi.scheduling.v1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"‡
PriorityClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
value (Rvalue$
globalDefault (RglobalDefault 
description (	Rdescription*
preemptionPolicy (	RpreemptionPolicy"ê
PriorityClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata6
items (2 .api.scheduling.v1.PriorityClassRitemsBZk8s.io/api/scheduling/v1
¸
'api/scheduling/v1alpha1/generated.protoapi.scheduling.v1alpha1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"
BasicSchedulingPolicy"2
GangSchedulingPolicy
minCount (RminCount"_
PodGroup
name (	Rname?
policy (2'.api.scheduling.v1alpha1.PodGroupPolicyRpolicy"ô
PodGroupPolicyD
basic (2..api.scheduling.v1alpha1.BasicSchedulingPolicyRbasicA
gang (2-.api.scheduling.v1alpha1.GangSchedulingPolicyRgang"‡
PriorityClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
value (Rvalue$
globalDefault (RglobalDefault 
description (	Rdescription*
preemptionPolicy (	RpreemptionPolicy"ñ
PriorityClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.api.scheduling.v1alpha1.PriorityClassRitems"_
TypedLocalObjectReference
apiGroup (	RapiGroup
kind (	Rkind
name (	Rname"å
WorkloadE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata9
spec (2%.api.scheduling.v1alpha1.WorkloadSpecRspec"å
WorkloadListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.api.scheduling.v1alpha1.WorkloadRitems"©
WorkloadSpecX
controllerRef (22.api.scheduling.v1alpha1.TypedLocalObjectReferenceRcontrollerRef?
	podGroups (2!.api.scheduling.v1alpha1.PodGroupR	podGroupsB Zk8s.io/api/scheduling/v1alpha1
É
&api/scheduling/v1beta1/generated.protoapi.scheduling.v1beta1api/core/v1/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"‡
PriorityClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata
value (Rvalue$
globalDefault (RglobalDefault 
description (	Rdescription*
preemptionPolicy (	RpreemptionPolicy"ï
PriorityClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata;
items (2%.api.scheduling.v1beta1.PriorityClassRitemsBZk8s.io/api/scheduling/v1beta1
°#
api/storage/v1/generated.protoapi.storage.v1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ö
	CSIDriverE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata1
spec (2.api.storage.v1.CSIDriverSpecRspec"Ö
CSIDriverListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata/
items (2.api.storage.v1.CSIDriverRitems"ç
CSIDriverSpec&
attachRequired (RattachRequired&
podInfoOnMount (RpodInfoOnMount2
volumeLifecycleModes (	RvolumeLifecycleModes(
storageCapacity (RstorageCapacity$
fsGroupPolicy (	RfsGroupPolicyB
tokenRequests (2.api.storage.v1.TokenRequestRtokenRequests,
requiresRepublish (RrequiresRepublish"
seLinuxMount (RseLinuxMountN
"nodeAllocatableUpdatePeriodSeconds	 (R"nodeAllocatableUpdatePeriodSecondsB
serviceAccountTokenInSecrets
 (RserviceAccountTokenInSecrets"Å
CSINodeE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata/
spec (2.api.storage.v1.CSINodeSpecRspec"¶
CSINodeDriver
name (	Rname
nodeID (	RnodeID"
topologyKeys (	RtopologyKeysE
allocatable (2#.api.storage.v1.VolumeNodeResourcesRallocatable"Å
CSINodeListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata-
items (2.api.storage.v1.CSINodeRitems"F
CSINodeSpec7
drivers (2.api.storage.v1.CSINodeDriverRdrivers"ı
CSIStorageCapacityE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataP
nodeTopology (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnodeTopology*
storageClassName (	RstorageClassNameC
capacity (2'.apimachinery.pkg.api.resource.QuantityRcapacityU
maximumVolumeSize (2'.apimachinery.pkg.api.resource.QuantityRmaximumVolumeSize"ó
CSIStorageCapacityListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata8
items (2".api.storage.v1.CSIStorageCapacityRitems"Å
StorageClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata 
provisioner (	RprovisionerL

parameters (2,.api.storage.v1.StorageClass.ParametersEntryR
parameters$
reclaimPolicy (	RreclaimPolicy"
mountOptions (	RmountOptions2
allowVolumeExpansion (RallowVolumeExpansion,
volumeBindingMode (	RvolumeBindingModeO
allowedTopologies (2!.api.core.v1.TopologySelectorTermRallowedTopologies=
ParametersEntry
key (	Rkey
value (	Rvalue:8"ã
StorageClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.storage.v1.StorageClassRitems"X
TokenRequest
audience (	Raudience,
expirationSeconds (RexpirationSeconds"”
VolumeAttachmentE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata8
spec (2$.api.storage.v1.VolumeAttachmentSpecRspec>
status (2&.api.storage.v1.VolumeAttachmentStatusRstatus"ì
VolumeAttachmentListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata6
items (2 .api.storage.v1.VolumeAttachmentRitems"õ
VolumeAttachmentSource2
persistentVolumeName (	RpersistentVolumeNameM
inlineVolumeSpec (2!.api.core.v1.PersistentVolumeSpecRinlineVolumeSpec"é
VolumeAttachmentSpec
attacher (	Rattacher>
source (2&.api.storage.v1.VolumeAttachmentSourceRsource
nodeName (	RnodeName"È
VolumeAttachmentStatus
attached (Rattachedn
attachmentMetadata (2>.api.storage.v1.VolumeAttachmentStatus.AttachmentMetadataEntryRattachmentMetadata=
attachError (2.api.storage.v1.VolumeErrorRattachError=
detachError (2.api.storage.v1.VolumeErrorRdetachErrorE
AttachmentMetadataEntry
key (	Rkey
value (	Rvalue:8"î
VolumeAttributesClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata

driverName (	R
driverNameU

parameters (25.api.storage.v1.VolumeAttributesClass.ParametersEntryR
parameters=
ParametersEntry
key (	Rkey
value (	Rvalue:8"ù
VolumeAttributesClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata;
items (2%.api.storage.v1.VolumeAttributesClassRitems"~
VolumeError7
time (2#.apimachinery.pkg.apis.meta.v1.TimeRtime
message (	Rmessage
	errorCode (R	errorCode"+
VolumeNodeResources
count (RcountBZk8s.io/api/storage/v1
Ω
$api/storage/v1alpha1/generated.protoapi.storage.v1alpha1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ı
CSIStorageCapacityE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataP
nodeTopology (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnodeTopology*
storageClassName (	RstorageClassNameC
capacity (2'.apimachinery.pkg.api.resource.QuantityRcapacityU
maximumVolumeSize (2'.apimachinery.pkg.api.resource.QuantityRmaximumVolumeSize"ù
CSIStorageCapacityListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata>
items (2(.api.storage.v1alpha1.CSIStorageCapacityRitems"ﬂ
VolumeAttachmentE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata>
spec (2*.api.storage.v1alpha1.VolumeAttachmentSpecRspecD
status (2,.api.storage.v1alpha1.VolumeAttachmentStatusRstatus"ô
VolumeAttachmentListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.api.storage.v1alpha1.VolumeAttachmentRitems"õ
VolumeAttachmentSource2
persistentVolumeName (	RpersistentVolumeNameM
inlineVolumeSpec (2!.api.core.v1.PersistentVolumeSpecRinlineVolumeSpec"î
VolumeAttachmentSpec
attacher (	RattacherD
source (2,.api.storage.v1alpha1.VolumeAttachmentSourceRsource
nodeName (	RnodeName"˚
VolumeAttachmentStatus
attached (Rattachedt
attachmentMetadata (2D.api.storage.v1alpha1.VolumeAttachmentStatus.AttachmentMetadataEntryRattachmentMetadataC
attachError (2!.api.storage.v1alpha1.VolumeErrorRattachErrorC
detachError (2!.api.storage.v1alpha1.VolumeErrorRdetachErrorE
AttachmentMetadataEntry
key (	Rkey
value (	Rvalue:8"ö
VolumeAttributesClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata

driverName (	R
driverName[

parameters (2;.api.storage.v1alpha1.VolumeAttributesClass.ParametersEntryR
parameters=
ParametersEntry
key (	Rkey
value (	Rvalue:8"£
VolumeAttributesClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataA
items (2+.api.storage.v1alpha1.VolumeAttributesClassRitems"~
VolumeError7
time (2#.apimachinery.pkg.apis.meta.v1.TimeRtime
message (	Rmessage
	errorCode (R	errorCodeBZk8s.io/api/storage/v1alpha1
è$
#api/storage/v1beta1/generated.protoapi.storage.v1beta1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ä
	CSIDriverE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata6
spec (2".api.storage.v1beta1.CSIDriverSpecRspec"ä
CSIDriverListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata4
items (2.api.storage.v1beta1.CSIDriverRitems"í
CSIDriverSpec&
attachRequired (RattachRequired&
podInfoOnMount (RpodInfoOnMount2
volumeLifecycleModes (	RvolumeLifecycleModes(
storageCapacity (RstorageCapacity$
fsGroupPolicy (	RfsGroupPolicyG
tokenRequests (2!.api.storage.v1beta1.TokenRequestRtokenRequests,
requiresRepublish (RrequiresRepublish"
seLinuxMount (RseLinuxMountN
"nodeAllocatableUpdatePeriodSeconds	 (R"nodeAllocatableUpdatePeriodSecondsB
serviceAccountTokenInSecrets
 (RserviceAccountTokenInSecrets"Ü
CSINodeE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata4
spec (2 .api.storage.v1beta1.CSINodeSpecRspec"´
CSINodeDriver
name (	Rname
nodeID (	RnodeID"
topologyKeys (	RtopologyKeysJ
allocatable (2(.api.storage.v1beta1.VolumeNodeResourcesRallocatable"Ü
CSINodeListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata2
items (2.api.storage.v1beta1.CSINodeRitems"K
CSINodeSpec<
drivers (2".api.storage.v1beta1.CSINodeDriverRdrivers"ı
CSIStorageCapacityE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataP
nodeTopology (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRnodeTopology*
storageClassName (	RstorageClassNameC
capacity (2'.apimachinery.pkg.api.resource.QuantityRcapacityU
maximumVolumeSize (2'.apimachinery.pkg.api.resource.QuantityRmaximumVolumeSize"ú
CSIStorageCapacityListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata=
items (2'.api.storage.v1beta1.CSIStorageCapacityRitems"Ü
StorageClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata 
provisioner (	RprovisionerQ

parameters (21.api.storage.v1beta1.StorageClass.ParametersEntryR
parameters$
reclaimPolicy (	RreclaimPolicy"
mountOptions (	RmountOptions2
allowVolumeExpansion (RallowVolumeExpansion,
volumeBindingMode (	RvolumeBindingModeO
allowedTopologies (2!.api.core.v1.TopologySelectorTermRallowedTopologies=
ParametersEntry
key (	Rkey
value (	Rvalue:8"ê
StorageClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata7
items (2!.api.storage.v1beta1.StorageClassRitems"X
TokenRequest
audience (	Raudience,
expirationSeconds (RexpirationSeconds"›
VolumeAttachmentE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata=
spec (2).api.storage.v1beta1.VolumeAttachmentSpecRspecC
status (2+.api.storage.v1beta1.VolumeAttachmentStatusRstatus"ò
VolumeAttachmentListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata;
items (2%.api.storage.v1beta1.VolumeAttachmentRitems"õ
VolumeAttachmentSource2
persistentVolumeName (	RpersistentVolumeNameM
inlineVolumeSpec (2!.api.core.v1.PersistentVolumeSpecRinlineVolumeSpec"ì
VolumeAttachmentSpec
attacher (	RattacherC
source (2+.api.storage.v1beta1.VolumeAttachmentSourceRsource
nodeName (	RnodeName"¯
VolumeAttachmentStatus
attached (Rattacheds
attachmentMetadata (2C.api.storage.v1beta1.VolumeAttachmentStatus.AttachmentMetadataEntryRattachmentMetadataB
attachError (2 .api.storage.v1beta1.VolumeErrorRattachErrorB
detachError (2 .api.storage.v1beta1.VolumeErrorRdetachErrorE
AttachmentMetadataEntry
key (	Rkey
value (	Rvalue:8"ô
VolumeAttributesClassE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata

driverName (	R
driverNameZ

parameters (2:.api.storage.v1beta1.VolumeAttributesClass.ParametersEntryR
parameters=
ParametersEntry
key (	Rkey
value (	Rvalue:8"¢
VolumeAttributesClassListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata@
items (2*.api.storage.v1beta1.VolumeAttributesClassRitems"~
VolumeError7
time (2#.apimachinery.pkg.apis.meta.v1.TimeRtime
message (	Rmessage
	errorCode (R	errorCode"+
VolumeNodeResources
count (RcountBZk8s.io/api/storage/v1beta1
µ
,api/storagemigration/v1beta1/generated.protoapi.storagemigration.v1beta1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ñ
StorageVersionMigrationE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataM
spec (29.api.storagemigration.v1beta1.StorageVersionMigrationSpecRspecS
status (2;.api.storagemigration.v1beta1.StorageVersionMigrationStatusRstatus"Ø
StorageVersionMigrationListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataK
items (25.api.storagemigration.v1beta1.StorageVersionMigrationRitems"g
StorageVersionMigrationSpecH
resource (2,.apimachinery.pkg.apis.meta.v1.GroupResourceRresource"ì
StorageVersionMigrationStatusH

conditions (2(.apimachinery.pkg.apis.meta.v1.ConditionR
conditions(
resourceVersion (	RresourceVersionB%Z#k8s.io/api/storagemigration/v1beta1
ÒD
Aapiextensions_apiserver/pkg/apis/apiextensions/v1/generated.proto1apiextensions_apiserver.pkg.apis.apiextensions.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ï
ConversionRequest
uid (	Ruid,
desiredAPIVersion (	RdesiredAPIVersion@
objects (2&.apimachinery.pkg.runtime.RawExtensionRobjects"π
ConversionResponse
uid (	RuidR
convertedObjects (2&.apimachinery.pkg.runtime.RawExtensionRconvertedObjects=
result (2%.apimachinery.pkg.apis.meta.v1.StatusRresult"’
ConversionReview^
request (2D.apiextensions_apiserver.pkg.apis.apiextensions.v1.ConversionRequestRrequesta
response (2E.apiextensions_apiserver.pkg.apis.apiextensions.v1.ConversionResponseRresponse"∫
CustomResourceColumnDefinition
name (	Rname
type (	Rtype
format (	Rformat 
description (	Rdescription
priority (Rpriority
jsonPath (	RjsonPath"ñ
CustomResourceConversion
strategy (	Rstrategy^
webhook (2D.apiextensions_apiserver.pkg.apis.apiextensions.v1.WebhookConversionRwebhook"±
CustomResourceDefinitionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadatac
spec (2O.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpecRspeci
status (2Q.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatusRstatus"Ü
!CustomResourceDefinitionCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage.
observedGeneration (RobservedGeneration"∆
CustomResourceDefinitionListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataa
items (2K.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionRitems"√
CustomResourceDefinitionNames
plural (	Rplural
singular (	Rsingular

shortNames (	R
shortNames
kind (	Rkind
listKind (	RlistKind

categories (	R
categories"≈
CustomResourceDefinitionSpec
group (	Rgroupf
names (2P.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNamesRnames
scope (	Rscopen
versions (2R.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersionRversionsk

conversion	 (2K.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceConversionR
conversion4
preserveUnknownFields
 (RpreserveUnknownFields"Ê
CustomResourceDefinitionStatust

conditions (2T.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionConditionR
conditionsv
acceptedNames (2P.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNamesRacceptedNames&
storedVersions (	RstoredVersions.
observedGeneration (RobservedGeneration"è
CustomResourceDefinitionVersion
name (	Rname
served (Rserved
storage (Rstorage

deprecated (R
deprecated.
deprecationWarning (	RdeprecationWarningc
schema (2K.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceValidationRschemaq
subresources (2M.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourcesRsubresourcesç
additionalPrinterColumns (2Q.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinitionRadditionalPrinterColumnsn
selectableFields	 (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.SelectableFieldRselectableFields"™
CustomResourceSubresourceScale*
specReplicasPath (	RspecReplicasPath.
statusReplicasPath (	RstatusReplicasPath,
labelSelectorPath (	RlabelSelectorPath"!
CustomResourceSubresourceStatus"Ò
CustomResourceSubresourcesj
status (2R.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatusRstatusg
scale (2Q.apiextensions_apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScaleRscale"à
CustomResourceValidationl
openAPIV3Schema (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRopenAPIV3Schema"K
ExternalDocumentation 
description (	Rdescription
url (	Rurl"
JSON
raw (Rraw"ò
JSONSchemaProps
id (	Rid
schema (	Rschema
ref (	Rref 
description (	Rdescription
type (	Rtype
format (	Rformat
title (	RtitleQ
default (27.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONRdefault
maximum	 (Rmaximum*
exclusiveMaximum
 (RexclusiveMaximum
minimum (Rminimum*
exclusiveMinimum (RexclusiveMinimum
	maxLength (R	maxLength
	minLength (R	minLength
pattern (	Rpattern
maxItems (RmaxItems
minItems (RminItems 
uniqueItems (RuniqueItems

multipleOf (R
multipleOfK
enum (27.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONRenum$
maxProperties (RmaxProperties$
minProperties (RminProperties
required (	Rrequired_
items (2I.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArrayRitemsX
allOf (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRallOfX
oneOf (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRoneOfX
anyOf (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRanyOfT
not (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRnotr

properties (2R.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps.PropertiesEntryR
properties|
additionalProperties (2H.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBoolRadditionalPropertiesá
patternProperties (2Y.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps.PatternPropertiesEntryRpatternPropertiesx
dependencies  (2T.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps.DependenciesEntryRdependenciesr
additionalItems! (2H.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBoolRadditionalItemsu
definitions" (2S.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps.DefinitionsEntryRdefinitionsl
externalDocs# (2H.apiextensions_apiserver.pkg.apis.apiextensions.v1.ExternalDocumentationRexternalDocsQ
example$ (27.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONRexample
nullable% (RnullableJ
 xKubernetesPreserveUnknownFields& (R xKubernetesPreserveUnknownFields@
xKubernetesEmbeddedResource' (RxKubernetesEmbeddedResource6
xKubernetesIntOrString( (RxKubernetesIntOrString6
xKubernetesListMapKeys) (	RxKubernetesListMapKeys0
xKubernetesListType* (	RxKubernetesListType.
xKubernetesMapType+ (	RxKubernetesMapTypey
xKubernetesValidations, (2A.apiextensions_apiserver.pkg.apis.apiextensions.v1.ValidationRuleRxKubernetesValidationsÅ
PropertiesEntry
key (	RkeyX
value (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRvalue:8à
PatternPropertiesEntry
key (	RkeyX
value (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRvalue:8ê
DependenciesEntry
key (	Rkeye
value (2O.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArrayRvalue:8Ç
DefinitionsEntry
key (	RkeyX
value (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRvalue:8"⁄
JSONSchemaPropsOrArrayZ
schema (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRschemad
jSONSchemas (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRjSONSchemas"ã
JSONSchemaPropsOrBool
allows (RallowsZ
schema (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRschema"ñ
JSONSchemaPropsOrStringArrayZ
schema (2B.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsRschema
property (	Rproperty"-
SelectableField
jsonPath (	RjsonPath"l
ServiceReference
	namespace (	R	namespace
name (	Rname
path (	Rpath
port (Rport"Ã
ValidationRule
rule (	Rrule
message (	Rmessage,
messageExpression (	RmessageExpression
reason (	Rreason
	fieldPath (	R	fieldPath(
optionalOldSelf (RoptionalOldSelf"¢
WebhookClientConfig
url (	Rurl]
service (2C.apiextensions_apiserver.pkg.apis.apiextensions.v1.ServiceReferenceRservice
caBundle (RcaBundle"ª
WebhookConversionj
clientConfig (2F.apiextensions_apiserver.pkg.apis.apiextensions.v1.WebhookClientConfigRclientConfig:
conversionReviewVersions (	RconversionReviewVersionsB:Z8k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1
˛I
Fapiextensions_apiserver/pkg/apis/apiextensions/v1beta1/generated.proto6apiextensions_apiserver.pkg.apis.apiextensions.v1beta1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ï
ConversionRequest
uid (	Ruid,
desiredAPIVersion (	RdesiredAPIVersion@
objects (2&.apimachinery.pkg.runtime.RawExtensionRobjects"π
ConversionResponse
uid (	RuidR
convertedObjects (2&.apimachinery.pkg.runtime.RawExtensionRconvertedObjects=
result (2%.apimachinery.pkg.apis.meta.v1.StatusRresult"ﬂ
ConversionReviewc
request (2I.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.ConversionRequestRrequestf
response (2J.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.ConversionResponseRresponse"∫
CustomResourceColumnDefinition
name (	Rname
type (	Rtype
format (	Rformat 
description (	Rdescription
priority (Rpriority
JSONPath (	RJSONPath"Ò
CustomResourceConversion
strategy (	Rstrategy}
webhookClientConfig (2K.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.WebhookClientConfigRwebhookClientConfig:
conversionReviewVersions (	RconversionReviewVersions"ª
CustomResourceDefinitionE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadatah
spec (2T.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionSpecRspecn
status (2V.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionStatusRstatus"Ü
!CustomResourceDefinitionCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage.
observedGeneration (RobservedGeneration"À
CustomResourceDefinitionListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataf
items (2P.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionRitems"√
CustomResourceDefinitionNames
plural (	Rplural
singular (	Rsingular

shortNames (	R
shortNames
kind (	Rkind
listKind (	RlistKind

categories (	R
categories"‚
CustomResourceDefinitionSpec
group (	Rgroup
version (	Rversionk
names (2U.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionNamesRnames
scope (	Rscopep

validation (2P.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceValidationR
validationv
subresources (2R.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceSubresourcesRsubresourcess
versions (2W.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionVersionRversionsí
additionalPrinterColumns (2V.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceColumnDefinitionRadditionalPrinterColumnss
selectableFields (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.SelectableFieldRselectableFieldsp

conversion	 (2P.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceConversionR
conversion4
preserveUnknownFields
 (RpreserveUnknownFields"
CustomResourceDefinitionStatusy

conditions (2Y.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionConditionR
conditions{
acceptedNames (2U.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceDefinitionNamesRacceptedNames&
storedVersions (	RstoredVersions.
observedGeneration (RobservedGeneration"£
CustomResourceDefinitionVersion
name (	Rname
served (Rserved
storage (Rstorage

deprecated (R
deprecated.
deprecationWarning (	RdeprecationWarningh
schema (2P.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceValidationRschemav
subresources (2R.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceSubresourcesRsubresourcesí
additionalPrinterColumns (2V.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceColumnDefinitionRadditionalPrinterColumnss
selectableFields	 (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.SelectableFieldRselectableFields"™
CustomResourceSubresourceScale*
specReplicasPath (	RspecReplicasPath.
statusReplicasPath (	RstatusReplicasPath,
labelSelectorPath (	RlabelSelectorPath"!
CustomResourceSubresourceStatus"˚
CustomResourceSubresourceso
status (2W.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceSubresourceStatusRstatusl
scale (2V.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.CustomResourceSubresourceScaleRscale"ç
CustomResourceValidationq
openAPIV3Schema (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRopenAPIV3Schema"K
ExternalDocumentation 
description (	Rdescription
url (	Rurl"
JSON
raw (Rraw"˝
JSONSchemaProps
id (	Rid
schema (	Rschema
ref (	Rref 
description (	Rdescription
type (	Rtype
format (	Rformat
title (	RtitleV
default (2<.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONRdefault
maximum	 (Rmaximum*
exclusiveMaximum
 (RexclusiveMaximum
minimum (Rminimum*
exclusiveMinimum (RexclusiveMinimum
	maxLength (R	maxLength
	minLength (R	minLength
pattern (	Rpattern
maxItems (RmaxItems
minItems (RminItems 
uniqueItems (RuniqueItems

multipleOf (R
multipleOfP
enum (2<.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONRenum$
maxProperties (RmaxProperties$
minProperties (RminProperties
required (	Rrequiredd
items (2N.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsOrArrayRitems]
allOf (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRallOf]
oneOf (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRoneOf]
anyOf (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRanyOfY
not (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRnotw

properties (2W.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaProps.PropertiesEntryR
propertiesÅ
additionalProperties (2M.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsOrBoolRadditionalPropertieså
patternProperties (2^.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaProps.PatternPropertiesEntryRpatternProperties}
dependencies  (2Y.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaProps.DependenciesEntryRdependenciesw
additionalItems! (2M.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsOrBoolRadditionalItemsz
definitions" (2X.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaProps.DefinitionsEntryRdefinitionsq
externalDocs# (2M.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.ExternalDocumentationRexternalDocsV
example$ (2<.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONRexample
nullable% (RnullableJ
 xKubernetesPreserveUnknownFields& (R xKubernetesPreserveUnknownFields@
xKubernetesEmbeddedResource' (RxKubernetesEmbeddedResource6
xKubernetesIntOrString( (RxKubernetesIntOrString6
xKubernetesListMapKeys) (	RxKubernetesListMapKeys0
xKubernetesListType* (	RxKubernetesListType.
xKubernetesMapType+ (	RxKubernetesMapType~
xKubernetesValidations, (2F.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.ValidationRuleRxKubernetesValidationsÜ
PropertiesEntry
key (	Rkey]
value (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRvalue:8ç
PatternPropertiesEntry
key (	Rkey]
value (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRvalue:8ï
DependenciesEntry
key (	Rkeyj
value (2T.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsOrStringArrayRvalue:8á
DefinitionsEntry
key (	Rkey]
value (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRvalue:8"‰
JSONSchemaPropsOrArray_
schema (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRschemai
jSONSchemas (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRjSONSchemas"ê
JSONSchemaPropsOrBool
allows (Rallows_
schema (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRschema"õ
JSONSchemaPropsOrStringArray_
schema (2G.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.JSONSchemaPropsRschema
property (	Rproperty"-
SelectableField
jsonPath (	RjsonPath"l
ServiceReference
	namespace (	R	namespace
name (	Rname
path (	Rpath
port (Rport"Ã
ValidationRule
rule (	Rrule
message (	Rmessage,
messageExpression (	RmessageExpression
reason (	Rreason
	fieldPath (	R	fieldPath(
optionalOldSelf (RoptionalOldSelf"ß
WebhookClientConfig
url (	Rurlb
service (2H.apiextensions_apiserver.pkg.apis.apiextensions.v1beta1.ServiceReferenceRservice
caBundle (RcaBundleB?Z=k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1
√
-apimachinery/pkg/api/resource/generated.protoapimachinery.pkg.api.resource""
Quantity
string (	Rstring"'
QuantityValue
string (	RstringB&Z$k8s.io/apimachinery/pkg/api/resource
ı6
-apimachinery/pkg/apis/meta/v1/generated.protoapimachinery.pkg.apis.meta.v1(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"“
APIGroup
name (	RnameS
versions (27.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscoveryRversionsc
preferredVersion (27.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscoveryRpreferredVersionx
serverAddressByClientCIDRs (28.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDRRserverAddressByClientCIDRs"O
APIGroupList?
groups (2'.apimachinery.pkg.apis.meta.v1.APIGroupRgroups"’
APIResource
name (	Rname"
singularName (	RsingularName

namespaced (R
namespaced
group (	Rgroup
version	 (	Rversion
kind (	Rkind:
verbs (2$.apimachinery.pkg.apis.meta.v1.VerbsRverbs

shortNames (	R
shortNames

categories (	R
categories.
storageVersionHash
 (	RstorageVersionHash"
APIResourceList"
groupVersion (	RgroupVersionH
	resources (2*.apimachinery.pkg.apis.meta.v1.APIResourceR	resources"£
APIVersions
versions (	Rversionsx
serverAddressByClientCIDRs (28.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDRRserverAddressByClientCIDRs"`
ApplyOptions
dryRun (	RdryRun
force (Rforce"
fieldManager (	RfieldManager"Ó
	Condition
type (	Rtype
status (	Rstatus.
observedGeneration (RobservedGenerationS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"u
CreateOptions
dryRun (	RdryRun"
fieldManager (	RfieldManager(
fieldValidation (	RfieldValidation"Ò
DeleteOptions.
gracePeriodSeconds (RgracePeriodSecondsR
preconditions (2,.apimachinery.pkg.apis.meta.v1.PreconditionsRpreconditions*
orphanDependents (RorphanDependents,
propagationPolicy (	RpropagationPolicy
dryRun (	RdryRunj
0ignoreStoreReadErrorWithClusterBreakingPotential (R0ignoreStoreReadErrorWithClusterBreakingPotential"&
Duration
duration (Rduration"`
FieldSelectorRequirement
key (	Rkey
operator (	Roperator
values (	Rvalues"
FieldsV1
Raw (RRaw"6

GetOptions(
resourceVersion (	RresourceVersion"5
	GroupKind
group (	Rgroup
kind (	Rkind"A
GroupResource
group (	Rgroup
resource (	Rresource">
GroupVersion
group (	Rgroup
version (	Rversion"X
GroupVersionForDiscovery"
groupVersion (	RgroupVersion
version (	Rversion"V
GroupVersionKind
group (	Rgroup
version (	Rversion
kind (	Rkind"b
GroupVersionResource
group (	Rgroup
version (	Rversion
resource (	Rresource"ï
LabelSelector_
matchLabels (2=.apimachinery.pkg.apis.meta.v1.LabelSelector.MatchLabelsEntryRmatchLabelsc
matchExpressions (27.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirementRmatchExpressions>
MatchLabelsEntry
key (	Rkey
value (	Rvalue:8"`
LabelSelectorRequirement
key (	Rkey
operator (	Roperator
values (	Rvalues"â
ListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata<
items (2&.apimachinery.pkg.runtime.RawExtensionRitems"ú
ListMeta
selfLink (	RselfLink(
resourceVersion (	RresourceVersion
continue (	Rcontinue.
remainingItemCount (RremainingItemCount"á
ListOptions$
labelSelector (	RlabelSelector$
fieldSelector (	RfieldSelector
watch (Rwatch0
allowWatchBookmarks	 (RallowWatchBookmarks(
resourceVersion (	RresourceVersion2
resourceVersionMatch
 (	RresourceVersionMatch&
timeoutSeconds (RtimeoutSeconds
limit (Rlimit
continue (	Rcontinue,
sendInitialEvents (RsendInitialEvents"¨
ManagedFieldsEntry
manager (	Rmanager
	operation (	R	operation

apiVersion (	R
apiVersion7
time (2#.apimachinery.pkg.apis.meta.v1.TimeRtime

fieldsType (	R
fieldsTypeC
fieldsV1 (2'.apimachinery.pkg.apis.meta.v1.FieldsV1RfieldsV1 
subresource (	Rsubresource";
	MicroTime
seconds (Rseconds
nanos (Rnanos"∫

ObjectMeta
name (	Rname"
generateName (	RgenerateName
	namespace (	R	namespace
selfLink (	RselfLink
uid (	Ruid(
resourceVersion (	RresourceVersion

generation (R
generationQ
creationTimestamp (2#.apimachinery.pkg.apis.meta.v1.TimeRcreationTimestampQ
deletionTimestamp	 (2#.apimachinery.pkg.apis.meta.v1.TimeRdeletionTimestamp>
deletionGracePeriodSeconds
 (RdeletionGracePeriodSecondsM
labels (25.apimachinery.pkg.apis.meta.v1.ObjectMeta.LabelsEntryRlabels\
annotations (2:.apimachinery.pkg.apis.meta.v1.ObjectMeta.AnnotationsEntryRannotationsW
ownerReferences (2-.apimachinery.pkg.apis.meta.v1.OwnerReferenceRownerReferences

finalizers (	R
finalizersW
managedFields (21.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntryRmanagedFields9
LabelsEntry
key (	Rkey
value (	Rvalue:8>
AnnotationsEntry
key (	Rkey
value (	Rvalue:8"∫
OwnerReference

apiVersion (	R
apiVersion
kind (	Rkind
name (	Rname
uid (	Ruid

controller (R
controller.
blockOwnerDeletion (RblockOwnerDeletion"^
PartialObjectMetadataE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadata"¨
PartialObjectMetadataListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataJ
items (24.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataRitems"
Patch"ä
PatchOptions
dryRun (	RdryRun
force (Rforce"
fieldManager (	RfieldManager(
fieldValidation (	RfieldValidation"K
Preconditions
uid (	Ruid(
resourceVersion (	RresourceVersion"!
	RootPaths
paths (	Rpaths"a
ServerAddressByClientCIDR

clientCIDR (	R
clientCIDR$
serverAddress (	RserverAddress"Û
StatusC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadata
status (	Rstatus
message (	Rmessage
reason (	RreasonF
details (2,.apimachinery.pkg.apis.meta.v1.StatusDetailsRdetails
code (Rcode"U
StatusCause
reason (	Rreason
message (	Rmessage
field (	Rfield"—
StatusDetails
name (	Rname
group (	Rgroup
kind (	Rkind
uid (	RuidB
causes (2*.apimachinery.pkg.apis.meta.v1.StatusCauseRcauses,
retryAfterSeconds (RretryAfterSeconds"4
TableOptions$
includeObject (	RincludeObject"6
Time
seconds (Rseconds
nanos (Rnanos";
	Timestamp
seconds (Rseconds
nanos (Rnanos">
TypeMeta
kind (	Rkind

apiVersion (	R
apiVersion"u
UpdateOptions
dryRun (	RdryRun"
fieldManager (	RfieldManager(
fieldValidation (	RfieldValidation"
Verbs
items (	Ritems"`

WatchEvent
type (	Rtype>
object (2&.apimachinery.pkg.runtime.RawExtensionRobjectB&Z$k8s.io/apimachinery/pkg/apis/meta/v1
î
2apimachinery/pkg/apis/meta/v1beta1/generated.proto"apimachinery.pkg.apis.meta.v1beta1-apimachinery/pkg/apis/meta/v1/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"¨
PartialObjectMetadataListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataJ
items (24.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataRitemsB+Z)k8s.io/apimachinery/pkg/apis/meta/v1beta1
Û
(apimachinery/pkg/runtime/generated.protoapimachinery.pkg.runtime" 
RawExtension
raw (Rraw">
TypeMeta

apiVersion (	R
apiVersion
kind (	Rkind"ß
Unknown>
typeMeta (2".apimachinery.pkg.runtime.TypeMetaRtypeMeta
raw (Rraw(
contentEncoding (	RcontentEncoding 
contentType (	RcontentTypeB!Zk8s.io/apimachinery/pkg/runtime
|
/apimachinery/pkg/runtime/schema/generated.protoapimachinery.pkg.runtime.schemaB(Z&k8s.io/apimachinery/pkg/runtime/schema
∆
,apimachinery/pkg/util/intstr/generated.protoapimachinery.pkg.util.intstr"Q
IntOrString
type (Rtype
intVal (RintVal
strVal (	RstrValB%Z#k8s.io/apimachinery/pkg/util/intstr
∂
;kube_aggregator/pkg/apis/apiregistration/v1/generated.proto+kube_aggregator.pkg.apis.apiregistration.v1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"˚

APIServiceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataO
spec (2;.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceSpecRspecU
status (2=.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceStatusRstatus"»
APIServiceCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"§
APIServiceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataM
items (27.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceRitems"…
APIServiceSpecW
service (2=.kube_aggregator.pkg.apis.apiregistration.v1.ServiceReferenceRservice
group (	Rgroup
version (	Rversion4
insecureSkipTLSVerify (RinsecureSkipTLSVerify
caBundle (RcaBundle2
groupPriorityMinimum (RgroupPriorityMinimum(
versionPriority (RversionPriority"t
APIServiceStatus`

conditions (2@.kube_aggregator.pkg.apis.apiregistration.v1.APIServiceConditionR
conditions"X
ServiceReference
	namespace (	R	namespace
name (	Rname
port (RportB4Z2k8s.io/kube-aggregator/pkg/apis/apiregistration/v1
ﬁ
@kube_aggregator/pkg/apis/apiregistration/v1beta1/generated.proto0kube_aggregator.pkg.apis.apiregistration.v1beta1-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ö

APIServiceE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataT
spec (2@.kube_aggregator.pkg.apis.apiregistration.v1beta1.APIServiceSpecRspecZ
status (2B.kube_aggregator.pkg.apis.apiregistration.v1beta1.APIServiceStatusRstatus"»
APIServiceCondition
type (	Rtype
status (	RstatusS
lastTransitionTime (2#.apimachinery.pkg.apis.meta.v1.TimeRlastTransitionTime
reason (	Rreason
message (	Rmessage"©
APIServiceListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataR
items (2<.kube_aggregator.pkg.apis.apiregistration.v1beta1.APIServiceRitems"Œ
APIServiceSpec\
service (2B.kube_aggregator.pkg.apis.apiregistration.v1beta1.ServiceReferenceRservice
group (	Rgroup
version (	Rversion4
insecureSkipTLSVerify (RinsecureSkipTLSVerify
caBundle (RcaBundle2
groupPriorityMinimum (RgroupPriorityMinimum(
versionPriority (RversionPriority"y
APIServiceStatuse

conditions (2E.kube_aggregator.pkg.apis.apiregistration.v1beta1.APIServiceConditionR
conditions"X
ServiceReference
	namespace (	R	namespace
name (	Rname
port (RportB9Z7k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1
ÿ
7metrics/pkg/apis/custom_metrics/v1beta1/generated.proto'metrics.pkg.apis.custom_metrics.v1beta1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"k
MetricListOptions$
labelSelector (	RlabelSelector0
metricLabelSelector (	RmetricLabelSelector"Ÿ
MetricValueF
describedObject (2.api.core.v1.ObjectReferenceRdescribedObject

metricName (	R
metricNameA
	timestamp (2#.apimachinery.pkg.apis.meta.v1.TimeR	timestamp
window (Rwindow=
value (2'.apimachinery.pkg.api.resource.QuantityRvalueH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"¢
MetricValueListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataJ
items (24.metrics.pkg.apis.custom_metrics.v1beta1.MetricValueRitemsB0Z.k8s.io/metrics/pkg/apis/custom_metrics/v1beta1
¡
7metrics/pkg/apis/custom_metrics/v1beta2/generated.proto'metrics.pkg.apis.custom_metrics.v1beta2api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"p
MetricIdentifier
name (	RnameH
selector (2,.apimachinery.pkg.apis.meta.v1.LabelSelectorRselector"k
MetricListOptions$
labelSelector (	RlabelSelector0
metricLabelSelector (	RmetricLabelSelector"–
MetricValueF
describedObject (2.api.core.v1.ObjectReferenceRdescribedObjectQ
metric (29.metrics.pkg.apis.custom_metrics.v1beta2.MetricIdentifierRmetricA
	timestamp (2#.apimachinery.pkg.apis.meta.v1.TimeR	timestamp$
windowSeconds (RwindowSeconds=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue"¢
MetricValueListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataJ
items (24.metrics.pkg.apis.custom_metrics.v1beta2.MetricValueRitemsB0Z.k8s.io/metrics/pkg/apis/custom_metrics/v1beta2
ì
9metrics/pkg/apis/external_metrics/v1beta1/generated.proto)metrics.pkg.apis.external_metrics.v1beta1-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"Ü
ExternalMetricValue

metricName (	R
metricNamet
metricLabels (2P.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValue.MetricLabelsEntryRmetricLabelsA
	timestamp (2#.apimachinery.pkg.apis.meta.v1.TimeR	timestamp
window (Rwindow=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue?
MetricLabelsEntry
key (	Rkey
value (	Rvalue:8"¥
ExternalMetricValueListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataT
items (2>.metrics.pkg.apis.external_metrics.v1beta1.ExternalMetricValueRitemsB2Z0k8s.io/metrics/pkg/apis/external_metrics/v1beta1
¥
1metrics/pkg/apis/metrics/v1alpha1/generated.proto!metrics.pkg.apis.metrics.v1alpha1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ﬂ
ContainerMetrics
name (	RnameT
usage (2>.metrics.pkg.apis.metrics.v1alpha1.ContainerMetrics.UsageEntryRusagea

UsageEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"å
NodeMetricsE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
	timestamp (2#.apimachinery.pkg.apis.meta.v1.TimeR	timestamp?
window (2'.apimachinery.pkg.apis.meta.v1.DurationRwindowO
usage (29.metrics.pkg.apis.metrics.v1alpha1.NodeMetrics.UsageEntryRusagea

UsageEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"ú
NodeMetricsListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataD
items (2..metrics.pkg.apis.metrics.v1alpha1.NodeMetricsRitems"¨

PodMetricsE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
	timestamp (2#.apimachinery.pkg.apis.meta.v1.TimeR	timestamp?
window (2'.apimachinery.pkg.apis.meta.v1.DurationRwindowS

containers (23.metrics.pkg.apis.metrics.v1alpha1.ContainerMetricsR
containers"ö
PodMetricsListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataC
items (2-.metrics.pkg.apis.metrics.v1alpha1.PodMetricsRitemsB*Z(k8s.io/metrics/pkg/apis/metrics/v1alpha1
¨
0metrics/pkg/apis/metrics/v1beta1/generated.proto metrics.pkg.apis.metrics.v1beta1api/core/v1/generated.proto-apimachinery/pkg/api/resource/generated.proto-apimachinery/pkg/apis/meta/v1/generated.proto(apimachinery/pkg/runtime/generated.proto/apimachinery/pkg/runtime/schema/generated.proto"ﬁ
ContainerMetrics
name (	RnameS
usage (2=.metrics.pkg.apis.metrics.v1beta1.ContainerMetrics.UsageEntryRusagea

UsageEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"ã
NodeMetricsE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
	timestamp (2#.apimachinery.pkg.apis.meta.v1.TimeR	timestamp?
window (2'.apimachinery.pkg.apis.meta.v1.DurationRwindowN
usage (28.metrics.pkg.apis.metrics.v1beta1.NodeMetrics.UsageEntryRusagea

UsageEntry
key (	Rkey=
value (2'.apimachinery.pkg.api.resource.QuantityRvalue:8"õ
NodeMetricsListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataC
items (2-.metrics.pkg.apis.metrics.v1beta1.NodeMetricsRitems"´

PodMetricsE
metadata (2).apimachinery.pkg.apis.meta.v1.ObjectMetaRmetadataA
	timestamp (2#.apimachinery.pkg.apis.meta.v1.TimeR	timestamp?
window (2'.apimachinery.pkg.apis.meta.v1.DurationRwindowR

containers (22.metrics.pkg.apis.metrics.v1beta1.ContainerMetricsR
containers"ô
PodMetricsListC
metadata (2'.apimachinery.pkg.apis.meta.v1.ListMetaRmetadataB
items (2,.metrics.pkg.apis.metrics.v1beta1.PodMetricsRitemsB)Z'k8s.io/metrics/pkg/apis/metrics/v1beta1