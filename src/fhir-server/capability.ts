// The test server's CapabilityStatement (GET [base]/metadata, R4 http.html#capabilities): what labgate reads at
// start to choose between a conditional create and an update as create. It says exactly what the engine allows.
import type { CapabilityStatement } from '@medplum/fhirtypes';

/** The server's statement; `tokenUrl` is advertised with the SMART oauth-uris extension. */
export function capabilityStatement(options: { conditionalCreate: boolean; updateCreate: boolean; tokenUrl: string; date: string }): CapabilityStatement {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: options.date,
    kind: 'instance',
    software: { name: 'labgate FHIR test server' },
    fhirVersion: '4.0.1',
    format: ['json'],
    rest: [
      {
        mode: 'server',
        security: {
          service: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/restful-security-service', code: 'SMART-on-FHIR' }] }],
          extension: [
            {
              url: 'http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris',
              extension: [{ url: 'token', valueUri: options.tokenUrl }],
            },
          ],
        },
        resource: [
          {
            type: 'Observation',
            versioning: 'versioned-update',
            readHistory: true,
            updateCreate: options.updateCreate,
            conditionalCreate: options.conditionalCreate,
            conditionalUpdate: false,
            interaction: [{ code: 'read' }, { code: 'vread' }, { code: 'update' }, { code: 'create' }, { code: 'search-type' }],
            searchParam: [{ name: 'identifier', type: 'token' }],
          },
        ],
        interaction: [{ code: 'batch' }],
      },
    ],
  };
}
