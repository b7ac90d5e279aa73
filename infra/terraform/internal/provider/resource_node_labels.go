package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var (
	_ resource.ResourceWithConfigure   = (*nodeLabelsResource)(nil)
	_ resource.ResourceWithImportState = (*nodeLabelsResource)(nil)
)

type nodeLabelsResource struct{ client *client.Client }

func newNodeLabelsResource() resource.Resource { return &nodeLabelsResource{} }

type nodeLabelsModel struct {
	ID     types.String `tfsdk:"id"`
	NodeID types.String `tfsdk:"node_id"`
	Labels types.Map    `tfsdk:"labels"`
}

var nodeLabelsAttributes = map[string]bool{"labels": true}

func (r *nodeLabelsResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_labels"
}

func (r *nodeLabelsResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The labels of one node, authoritatively: labels set elsewhere (the console, the enrollment " +
			"token) are removed on the next apply, and destroying the resource removes every label. Nodes enroll themselves; " +
			"Terraform never creates or deletes them. A node deleted outside Terraform is dropped from the state. Import by node id.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The node's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"node_id": schema.StringAttribute{Required: true, MarkdownDescription: "The node whose labels these are.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"labels": schema.MapAttribute{Required: true, ElementType: types.StringType,
				MarkdownDescription: "Every label of the node (Kubernetes-style keys and values).",
				Validators: []validator.Map{
					mapvalidator.KeysAre(stringvalidator.RegexMatches(labelKeyPattern, "must be a label key: an optional DNS prefix and '/', then 1–63 letters, digits, '-', '_' or '.'")),
					mapvalidator.ValueStringsAre(stringvalidator.RegexMatches(labelValuePattern, "must be 1–63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")),
				}},
		},
	}
}

func (r *nodeLabelsResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

// apply makes the node's labels exactly `want`: one request adds and removes.
func (r *nodeLabelsResource) apply(ctx context.Context, nodeID string, want map[string]string) error {
	node, err := r.client.GetNode(ctx, nodeID)
	if err != nil {
		return err
	}
	var remove []string
	for key := range node.Labels {
		if _, keep := want[key]; !keep {
			remove = append(remove, key)
		}
	}
	return r.client.ChangeNodeLabels(ctx, nodeID, want, remove)
}

func (r *nodeLabelsResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeLabelsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	want := map[string]string{}
	resp.Diagnostics.Append(plan.Labels.ElementsAs(ctx, &want, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.apply(ctx, plan.NodeID.ValueString(), want); err != nil {
		addAPIError(&resp.Diagnostics, "Could not set the node's labels", err, nodeLabelsAttributes, map[string]string{"add": "labels", "remove": "labels"})
		return
	}
	plan.ID = plan.NodeID
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *nodeLabelsResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state nodeLabelsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, err := r.client.GetNode(ctx, state.ID.ValueString())
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the node", err.Error())
		return
	}
	state.NodeID = types.StringValue(node.ID)
	labels, diags := types.MapValueFrom(ctx, types.StringType, node.Labels)
	resp.Diagnostics.Append(diags...)
	state.Labels = labels
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *nodeLabelsResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan nodeLabelsModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	want := map[string]string{}
	resp.Diagnostics.Append(plan.Labels.ElementsAs(ctx, &want, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.apply(ctx, plan.NodeID.ValueString(), want); err != nil {
		addAPIError(&resp.Diagnostics, "Could not set the node's labels", err, nodeLabelsAttributes, map[string]string{"add": "labels", "remove": "labels"})
		return
	}
	plan.ID = plan.NodeID
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *nodeLabelsResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeLabelsModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.apply(ctx, state.ID.ValueString(), map[string]string{}); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not remove the node's labels", err.Error())
	}
}

func (r *nodeLabelsResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
