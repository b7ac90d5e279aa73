package provider

import (
	"context"
	"fmt"
	"strings"

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
	_ resource.ResourceWithConfigure   = (*memberResource)(nil)
	_ resource.ResourceWithImportState = (*memberResource)(nil)
)

type memberResource struct{ client *client.Client }

func newMemberResource() resource.Resource { return &memberResource{} }

type memberModel struct {
	ID                types.String `tfsdk:"id"`
	Email             types.String `tfsdk:"email"`
	Role              types.String `tfsdk:"role"`
	Name              types.String `tfsdk:"name"`
	Pending           types.Bool   `tfsdk:"pending"`
	TemporaryPassword types.String `tfsdk:"temporary_password"`
}

var memberAttributes = map[string]bool{"email": true, "role": true}

func (r *memberResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_member"
}

func (r *memberResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A member of the organization, invited by e-mail. A person new to Keycloak gets an account " +
			"and a one-time password (`temporary_password`, known after create only) to hand over. The role changes in " +
			"place; a new e-mail is a new member. Destroying it removes the membership. Import by user id or e-mail.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The member's user id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"email": schema.StringAttribute{Required: true, MarkdownDescription: "The person's e-mail address.",
				Validators:    []validator.String{stringvalidator.RegexMatches(emailPattern, "must be an e-mail address")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"role": schema.StringAttribute{Required: true, MarkdownDescription: "One of `owner`, `admin`, `operator`, `viewer`.",
				Validators: []validator.String{stringvalidator.OneOf(roles...)}},
			"name": schema.StringAttribute{Computed: true, MarkdownDescription: "The person's name, once they signed in.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"pending": schema.BoolAttribute{Computed: true, MarkdownDescription: "True until the person signs in for the first time."},
			"temporary_password": schema.StringAttribute{Computed: true, Sensitive: true,
				MarkdownDescription: "The one-time password of a newly made account (null when the person had one already).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		},
	}
}

func (r *memberResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

func (m *memberModel) fill(member *client.Member) {
	m.ID = types.StringValue(member.UserID)
	// E-mail addresses compare without case; keep the configured spelling.
	if !strings.EqualFold(m.Email.ValueString(), member.Email) {
		m.Email = types.StringValue(member.Email)
	}
	m.Role = types.StringValue(member.Role)
	m.Name = types.StringPointerValue(member.Name)
	m.Pending = types.BoolValue(member.Pending)
	if m.TemporaryPassword.IsUnknown() {
		m.TemporaryPassword = types.StringNull()
	}
}

func (r *memberResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan memberModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	invited, err := r.client.InviteMember(ctx, client.MemberInvite{Email: plan.Email.ValueString(), Role: plan.Role.ValueString()})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not invite the member", err, memberAttributes, nil)
		return
	}
	plan.fill(&invited.Member)
	plan.TemporaryPassword = types.StringNull()
	if invited.Handover != nil {
		plan.TemporaryPassword = types.StringPointerValue(invited.Handover.TemporaryPassword)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *memberResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state memberModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	member, err := r.client.GetMember(ctx, state.ID.ValueString())
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the member", err.Error())
		return
	}
	state.fill(member)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *memberResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan memberModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	member, err := r.client.SetMemberRole(ctx, plan.ID.ValueString(), plan.Role.ValueString())
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not change the member's role", err, memberAttributes, nil)
		return
	}
	plan.fill(member)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *memberResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state memberModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.RemoveMember(ctx, state.ID.ValueString()); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not remove the member", err.Error())
	}
}

// ImportState takes a user id, or an e-mail address looked up among the members.
func (r *memberResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id := req.ID
	if strings.Contains(id, "@") {
		members, err := r.client.ListMembers(ctx)
		if err != nil {
			resp.Diagnostics.AddError("Could not list the members", err.Error())
			return
		}
		id = ""
		for _, m := range members {
			if strings.EqualFold(m.Email, req.ID) {
				id = m.UserID
			}
		}
		if id == "" {
			resp.Diagnostics.AddError("No such member", fmt.Sprintf("nobody with the e-mail %q is a member of the organization", req.ID))
			return
		}
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
}
